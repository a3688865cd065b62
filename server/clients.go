package server

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"

	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/fileaccess"
	"github.com/kmirror/kmirror/redact"
)

// DefaultAllowedFileDirs is where client settings may name files unless --allowed-file-dirs says otherwise:
// the working directory's secrets/, which need not exist.
var DefaultAllowedFileDirs = []string{"secrets"}

// ClientRules are the operator's rules for what connector configs may make kmirror read.
type ClientRules struct {
	// AllowedFileDirs are the directories key stores, CA files and other path settings may point into
	// (--allowed-file-dirs). Nil means DefaultAllowedFileDirs; directories named explicitly must exist.
	AllowedFileDirs []string
	// ConfigProviders are the enabled config providers: env, file, directory (--config-providers).
	ConfigProviders []string
	// ConfigProviderAllowedPaths are the directories the file and directory providers may read
	// (--config-provider-allowed-paths); required when either is enabled.
	ConfigProviderAllowedPaths []string
	// ConfigProviderEnvAllowlist is the regular expression environment variable names must match for the env
	// provider (--config-provider-env-allowlist); empty allows all but KMIRROR_*.
	ConfigProviderEnvAllowlist string
	// AllowedOAuthURLs are the OAUTHBEARER token endpoints client settings may name
	// (sasl.oauthbearer.token.endpoint.url), compared exactly (--allowed-oauth-urls); none by default, as in
	// Kafka 4 (org.apache.kafka.sasl.oauthbearer.allowed.urls).
	AllowedOAuthURLs []string
}

// options checks the rules and builds the client options the REST API validates with and the runtime
// builds clients with: one value, so that what was accepted is what runs.
// What providers resolve is added to hidden, which the logs and the stored statuses hide.
func (r ClientRules) options(log *slog.Logger, hidden *redact.Values) (clientconfig.Options, error) {
	dirs, mayBeMissing := r.AllowedFileDirs, false
	if dirs == nil {
		dirs, mayBeMissing = DefaultAllowedFileDirs, true
	}
	files, err := fileaccess.New("--allowed-file-dirs", dirs, mayBeMissing)
	if err != nil {
		return clientconfig.Options{}, err
	}
	for _, d := range files.Dirs() {
		if _, err := os.Stat(d); err != nil {
			log.Info("allowed file directory does not exist; configs naming files in it fail until it does", "dir", d)
		}
	}
	paths, err := fileaccess.New("--config-provider-allowed-paths", r.ConfigProviderAllowedPaths, false)
	if err != nil {
		return clientconfig.Options{}, err
	}
	providers, err := configprovider.New(configprovider.Config{
		Enabled: r.ConfigProviders, AllowedPaths: paths, EnvAllowlist: r.ConfigProviderEnvAllowlist,
	})
	if err != nil {
		return clientconfig.Options{}, fmt.Errorf("config providers: %w", err)
	}
	if e := providers.Enabled(); len(e) > 0 {
		log.Info("config providers enabled", "providers", e, "allowed_paths", paths.Dirs())
	}
	for _, u := range r.AllowedOAuthURLs {
		if parsed, err := url.Parse(u); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			return clientconfig.Options{}, fmt.Errorf("--allowed-oauth-urls: %q is not an http(s) URL", u)
		}
	}
	return clientconfig.Options{Files: files, Providers: providers, OAuthURLs: r.AllowedOAuthURLs, Hidden: hidden}, nil
}
