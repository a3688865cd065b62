package clientconfig

import (
	"github.com/kmirror/kmirror/fileaccess"
)

// Options are the operator's decisions that apply to every client config kmirror builds or validates. The
// zero value allows no file and resolves no config provider reference.
type Options struct {
	// Files are the directories whose files a client setting may name (--allowed-file-dirs): key and trust
	// stores, CA and CRL files, OAUTHBEARER assertion files. A path elsewhere is refused with one fixed
	// error, before anything opens it.
	Files fileaccess.Allowlist
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
