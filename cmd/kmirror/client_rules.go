package main

import (
	"flag"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/server"
)

// registerClientRules adds the flags that limit what connector configs may make kmirror read, and returns
// the function that collects them once parsed.
func registerClientRules(fs *flag.FlagSet) func() server.ClientRules {
	dirs := fs.String("allowed-file-dirs", "", "comma-separated directories whose files client settings (ssl.truststore.location, ssl.keystore.location, ssl.ca.location, ...) may name; default: secrets/ in the working directory (KMIRROR_ALLOWED_FILE_DIRS)")
	providers := fs.String("config-providers", "", "comma-separated config providers connector configs may reference: env (${env:VAR}), file (${file:/path.properties:key}), directory (${directory:/dir:file}); default none (KMIRROR_CONFIG_PROVIDERS)")
	paths := fs.String("config-provider-allowed-paths", "", "comma-separated directories the file and directory config providers may read; required with either (KMIRROR_CONFIG_PROVIDER_ALLOWED_PATHS)")
	envAllow := fs.String("config-provider-env-allowlist", "", "regular expression an environment variable's name must match for ${env:...}; default any but KMIRROR_* (KMIRROR_CONFIG_PROVIDER_ENV_ALLOWLIST)")
	oauthURLs := fs.String("allowed-oauth-urls", "", "comma-separated OAUTHBEARER token endpoint URLs client settings may name (sasl.oauthbearer.token.endpoint.url), matched exactly as Kafka's org.apache.kafka.sasl.oauthbearer.allowed.urls; default none (KMIRROR_ALLOWED_OAUTH_URLS)")
	return func() server.ClientRules {
		return server.ClientRules{
			AllowedFileDirs:            clientconfig.CommaList(*dirs),
			ConfigProviders:            clientconfig.CommaList(*providers),
			ConfigProviderAllowedPaths: clientconfig.CommaList(*paths),
			ConfigProviderEnvAllowlist: *envAllow,
			AllowedOAuthURLs:           clientconfig.CommaList(*oauthURLs),
		}
	}
}
