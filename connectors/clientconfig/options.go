package clientconfig

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/fileaccess"
	"github.com/kmirror/kmirror/redact"
)

// Options are the operator's decisions that apply to every client config kmirror builds or validates. The
// zero value allows no file and no OAUTHBEARER token endpoint, and resolves no config provider reference.
type Options struct {
	// Files are the directories whose files a client setting may name (--allowed-file-dirs): key and trust
	// stores, CA and CRL files, OAUTHBEARER assertion files. A path elsewhere is refused with one fixed
	// error, before anything opens it.
	Files fileaccess.Allowlist
	// Providers resolve the config provider references (${env:VAR}, ${file:/path:key}, ...) in client
	// settings when a client is built; nil enables none.
	Providers *configprovider.Providers
	// OAuthURLs are the token endpoint URLs an OAUTHBEARER client may fetch tokens from (--allowed-oauth-urls),
	// compared exactly, as Kafka 4 compares org.apache.kafka.sasl.oauthbearer.allowed.urls. Empty allows none:
	// kmirror posts the config's client secret to that URL from inside the operator's network, so without a
	// limit whoever writes a config could make it call (and learn the answer of) any internal service.
	OAuthURLs []string
	// Hidden receives every value a config provider resolves when a client is built, so that the logs, traces
	// and notices that librdkafka's texts reach can hide it (see package redact). Nil remembers none.
	Hidden *redact.Values
}

// allowedOAuthURL reports whether url is one of OAuthURLs.
func (o Options) allowedOAuthURL(url string) bool { return slices.Contains(o.OAuthURLs, url) }

// describeOAuthURLs names the allowed token endpoints for an error message.
func (o Options) describeOAuthURLs() string {
	if len(o.OAuthURLs) == 0 {
		return "--allowed-oauth-urls is empty, so none"
	}
	return "--allowed-oauth-urls: " + strings.Join(o.OAuthURLs, ", ")
}

// Translate is the package's Translate under these options.
func (o Options) Translate(role Role, javaProps map[string]string) (Config, error) {
	return translateJoined(o, role, javaProps)
}

// Validate is the package's Validate under these options.
func (o Options) Validate(connectorConfig map[string]string, isConnectorKey func(string) bool) map[string][]string {
	return validate(o, connectorConfig, isConnectorKey)
}

// pathProperties are the librdkafka properties whose value is a file (or directory) librdkafka opens. Each is
// checked against Options.Files after translation, whichever key set it (a Java key converted to it, or the
// librdkafka name passed through). ssl.engine.location and plugin.library.paths are not here: they load code
// and are refused outright (see lib_rules.go).
var pathProperties = map[string]bool{
	"ssl.ca.location":                              true,
	"ssl.certificate.location":                     true,
	"ssl.key.location":                             true,
	"ssl.keystore.location":                        true,
	"ssl.crl.location":                             true,
	"https.ca.location":                            true,
	"sasl.kerberos.keytab":                         true,
	"offset.store.path":                            true,
	"sasl.oauthbearer.assertion.file":              true,
	"sasl.oauthbearer.assertion.private.key.file":  true,
	"sasl.oauthbearer.assertion.jwt.template.file": true,
}

// probeValue is the ssl.ca.location (and https.ca.location) value that asks librdkafka to look for the
// system's CA bundle in the usual places: no path of the config's choosing.
const probeValue = "probe"

// allowedFile checks a path setting before anything opens it. The message names the key, the path as given
// and the allowed directories, and is the same whether the file exists or not.
func (t *translator) allowedFile(key, path string) bool {
	if _, err := t.opts.Files.Check(path); err != nil {
		t.fail(key, "%q is outside the directories kmirror may read files from (%s)", path, t.opts.Files.Describe())
		return false
	}
	return true
}

// checkPaths checks every path that would reach librdkafka. It runs after the pass-through, so that a
// librdkafka name given directly is held to the same rule as a Java key converted to it.
func (t *translator) checkPaths() {
	failed := map[string]bool{}
	for lib := range pathProperties {
		v, ok := t.out[lib]
		if !ok || (v == probeValue && (lib == "ssl.ca.location" || lib == "https.ca.location")) {
			continue
		}
		src := t.from[lib]
		if src == "" {
			src = lib
		}
		if failed[src] {
			continue
		}
		if !t.allowedFile(src, v) {
			failed[src] = true
			delete(t.out, lib)
		}
	}
}

// Client builds the librdkafka settings of one client the way a connector or task does when it starts:
// Resolve, then the config provider references in the resolved settings, then clientID (which gets the
// user's client.id, resolved, and returns the one to use), then Translate.
//
// Secrets from providers stay out of errors: a setting whose value came from a reference and that
// translation refuses is reported as invalid without its value, under the connector key, and any resolved
// value that still appears in another message is replaced by its reference.
func (o Options) Client(role Role, connectorConfig map[string]string, isConnectorKey func(string) bool, clientID func(string) string) (Config, error) {
	props, origin := resolve(role, connectorConfig, isConnectorKey)
	if configprovider.HasReference(props[KeyClientID]) {
		return Config{}, &KeyError{Key: origin[KeyClientID], Msg: clientIDReferenceMsg}
	}
	fromRef := map[string]string{} // Java key -> the value as written, with its references
	if o.Providers != nil || hasReferences(props) {
		r := o.Providers.Begin()
		var errs []error
		for _, k := range sortedKeys(props) {
			v := props[k]
			if !configprovider.HasReference(v) {
				continue
			}
			resolved, err := r.Resolve(v)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", origin[k], err))
				continue
			}
			fromRef[k] = v
			props[k] = resolved
			o.Hidden.Add(resolved)
		}
		for _, v := range r.Found() {
			// librdkafka trims some values (a file read by the directory provider ends with its newline).
			o.Hidden.Add(v, strings.TrimSpace(v))
		}
		if len(errs) > 0 {
			return Config{}, errors.Join(errs...)
		}
	}
	if clientID != nil {
		props[KeyClientID] = clientID(props[KeyClientID])
	}
	cfg, kerrs := translate(o, role, props)
	if len(kerrs) == 0 {
		return cfg, nil
	}
	joined := make([]error, len(kerrs))
	for i, e := range kerrs {
		if written, ok := fromRef[e.Key]; ok {
			e = &KeyError{Key: origin[e.Key], Msg: "the value of " + written + " is not valid for this setting (not shown: it came from a config provider)"}
		} else {
			e = &KeyError{Key: e.Key, Msg: hideResolved(e.Msg, props, fromRef)}
		}
		joined[i] = e
	}
	return Config{}, errors.Join(joined...)
}

// hideResolved replaces every resolved value long enough to be recognised in msg by the reference it came
// from. Short values ("1", "ssl") are left: they would garble messages and say little.
func hideResolved(msg string, props, fromRef map[string]string) string {
	for k, written := range fromRef {
		if v := props[k]; len(v) >= 4 {
			msg = strings.ReplaceAll(msg, v, written)
		}
	}
	return msg
}

func hasReferences(props map[string]string) bool {
	for _, v := range props {
		if configprovider.HasReference(v) {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
