package clientconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFilesOutsideTheAllowedDirsAreRefusedUnread: a path outside --allowed-file-dirs gets one text naming the
// key and the allowed directories, the same for a file that exists, one that does not, a directory, a key
// store and a file that is not one, so a config cannot probe the server's files.
func TestFilesOutsideTheAllowedDirsAreRefusedUnread(t *testing.T) {
	root := t.TempDir()
	allowed, outside := filepath.Join(root, "secrets"), filepath.Join(root, "elsewhere")
	require.NoError(t, os.Mkdir(allowed, 0o700))
	require.NoError(t, os.Mkdir(outside, 0o700))
	jks, err := os.ReadFile("testdata/truststore.jks")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(outside, "truststore.jks"), jks, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "notes.txt"), []byte("hello"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(allowed, "link")))
	opts := Options{Files: allowDirs(t, allowed)}

	for _, key := range []string{"ssl.truststore.location", "ssl.keystore.location"} {
		var texts []string
		for _, path := range []string{
			filepath.Join(outside, "truststore.jks"),
			filepath.Join(outside, "notes.txt"),
			filepath.Join(outside, "missing.jks"),
			outside,
			filepath.Join(allowed, "..", "elsewhere", "truststore.jks"),
			filepath.Join(allowed, "link", "truststore.jks"),
			filepath.Join(allowed, "link", "missing.jks"),
		} {
			in := sslProps("bootstrap.servers", "a:1", key, path, strings.Replace(key, "location", "password", 1), "changeit")
			_, errs := translate(opts, SourceAdmin, in)
			require.Len(t, errs, 1, "%s=%s: %v", key, path, errs)
			require.Equal(t, key, errs[0].Key)
			texts = append(texts, strings.Replace(errs[0].Msg, path, "PATH", 1))
		}
		for _, txt := range texts {
			require.Equal(t, texts[0], txt, "%s: the same text whatever the path is", key)
		}
		require.Equal(t, `"PATH" is outside the directories kmirror may read files from (--allowed-file-dirs: `+
			opts.Files.Dirs()[0]+`)`, texts[0])
	}
}

// TestEveryPathSettingIsChecked: librdkafka's own path properties, passed through, and the Java keys that
// become them are held to the same rule; inside the allowed directories they pass unchanged.
func TestEveryPathSettingIsChecked(t *testing.T) {
	opts := testOptions(t)
	for _, tc := range []struct {
		role Role
		in   map[string]string
		key  string
	}{
		{SourceAdmin, sslProps("ssl.ca.location", "/etc/ssl/certs"), "ssl.ca.location"},
		{SourceAdmin, sslProps("ssl.certificate.location", "/etc/hostname"), "ssl.certificate.location"},
		{SourceAdmin, sslProps("ssl.key.location", "/etc/hostname"), "ssl.key.location"},
		{SourceAdmin, sslProps("ssl.crl.location", "/etc/hostname"), "ssl.crl.location"},
		{SourceAdmin, sslProps("ssl.truststore.type", "PEM", "ssl.truststore.location", "/etc/hostname"), "ssl.truststore.location"},
		{SourceAdmin, sslProps("ssl.keystore.type", "PEM", "ssl.keystore.location", "/etc/hostname"), "ssl.keystore.location"},
	} {
		in := map[string]string{"bootstrap.servers": "a:1"}
		for k, v := range tc.in {
			in[k] = v
		}
		_, errs := translate(opts, tc.role, in)
		require.Len(t, errs, 1, "%v: %v", tc.in, errs)
		require.Equal(t, tc.key, errs[0].Key)
		require.Contains(t, errs[0].Msg, "is outside the directories kmirror may read files from")

		_, errs = translate(Options{}, tc.role, in)
		require.Len(t, errs, 1, "no file at all by default")
		require.Contains(t, errs[0].Msg, "no directory is allowed")
	}

	cfg, errs := translate(Options{}, SourceAdmin, sslProps("bootstrap.servers", "a:1", "ssl.ca.location", "probe"))
	require.Empty(t, errs, "probe names no file: librdkafka looks in the system's usual places")
	require.Equal(t, "probe", cfg.Props["ssl.ca.location"])
}

// TestValidateNamesTheConnectorKeyOfARefusedFile: /validate and a PUT report the key the operator wrote.
func TestValidateNamesTheConnectorKeyOfARefusedFile(t *testing.T) {
	cfg := map[string]string{
		"connector.class":                        "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
		"source.cluster.alias":                   "a",
		"target.cluster.alias":                   "b",
		"source.cluster.bootstrap.servers":       "a:1",
		"target.cluster.bootstrap.servers":       "b:1",
		"target.cluster.security.protocol":       "SSL",
		"target.cluster.ssl.truststore.location": "/etc/passwd",
		"target.cluster.ssl.truststore.password": "changeit",
	}
	errs := testOptions(t).Validate(cfg, nil)
	require.Len(t, errs["target.cluster.ssl.truststore.location"], 1, "%v", errs)
	require.Contains(t, errs["target.cluster.ssl.truststore.location"][0],
		`target.cluster.ssl.truststore.location: "/etc/passwd" is outside the directories kmirror may read files from`)

	cfg["target.cluster.ssl.truststore.location"] = "testdata/truststore.jks"
	require.Empty(t, testOptions(t).Validate(cfg, nil))
}
