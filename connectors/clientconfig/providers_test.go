package clientconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/fileaccess"
	"github.com/kmirror/kmirror/redact"
)

func providerOptions(t *testing.T, env map[string]string) (Options, string) {
	t.Helper()
	dir := t.TempDir()
	paths, err := fileaccess.New("--config-provider-allowed-paths", []string{dir}, false)
	require.NoError(t, err)
	p, err := configprovider.New(configprovider.Config{Enabled: configprovider.Names, AllowedPaths: paths,
		LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
	require.NoError(t, err)
	return Options{Files: allowDirs(t, "testdata"), Providers: p}, dir
}

const heartbeatClass = "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"

func TestClientResolvesReferences(t *testing.T) {
	opts, dir := providerOptions(t, map[string]string{"KAFKA_USER": "alice"})
	props := filepath.Join(dir, "kafka.properties")
	require.NoError(t, os.WriteFile(props, []byte("password=pw-0f-alice\nlinger=bogus-linger-value\n"), 0o600))
	cfg := map[string]string{
		"connector.class":                  heartbeatClass,
		"target.cluster.bootstrap.servers": "b:1",
		"target.cluster.security.protocol": "SASL_SSL",
		"target.cluster.sasl.mechanism":    "PLAIN",
		"target.cluster.sasl.jaas.config": `org.apache.kafka.common.security.plain.PlainLoginModule required username="${env:KAFKA_USER}" ` +
			`password="${file:` + props + `:password}";`,
		"target.cluster.ssl.truststore.type":     "PEM",
		"target.cluster.ssl.truststore.location": "testdata/ca.pem",
	}
	got, err := opts.Client(HeartbeatsProducer, cfg, nil, nil)
	require.NoError(t, err)
	require.Equal(t, "alice", got.Props["sasl.username"])
	require.Equal(t, "pw-0f-alice", got.Props["sasl.password"])
	require.Contains(t, cfg["target.cluster.sasl.jaas.config"], `password="${file:`+props+`:password}"`, "the connector config is left as written")

	// A reference that cannot be resolved names the connector key and the reference, not a value.
	cfg["target.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="${file:` + props + `:nope}";`
	_, err = opts.Client(HeartbeatsProducer, cfg, nil, nil)
	require.ErrorContains(t, err, "target.cluster.sasl.jaas.config: ${file:"+props+":nope}: no key nope in "+props+" (file config provider)")

	// A resolved value that translation refuses is not shown.
	cfg["target.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="p";`
	cfg["target.producer.linger.ms"] = "${file:" + props + ":linger}"
	_, err = opts.Client(HeartbeatsProducer, cfg, nil, nil)
	require.ErrorContains(t, err, "target.producer.linger.ms: the value of ${file:"+props+":linger} is not valid for this setting (not shown: it came from a config provider)")
	require.NotContains(t, err.Error(), "bogus-linger-value")

	// Without providers a reference is refused, not sent to Kafka as text.
	_, err = Options{}.Client(HeartbeatsProducer, map[string]string{"target.cluster.bootstrap.servers": "${env:X}"}, nil, nil)
	require.ErrorContains(t, err, "target.cluster.bootstrap.servers: ${env:X}: the env config provider is not enabled on this worker")
}

func TestValidateChecksReferencesWithoutResolving(t *testing.T) {
	opts, dir := providerOptions(t, nil)
	cfg := map[string]string{
		"connector.class":                        heartbeatClass,
		"source.cluster.alias":                   "a",
		"target.cluster.alias":                   "b",
		"target.cluster.bootstrap.servers":       "${file:" + dir + "/missing.properties:bootstrap}",
		"target.cluster.security.protocol":       "SSL",
		"target.cluster.ssl.truststore.location": "${directory:" + dir + ":truststore.pem}",
		"target.cluster.ssl.truststore.type":     "PEM",
		"target.producer.linger.ms":              "${env:LINGER}",
	}
	require.Empty(t, opts.Validate(cfg, nil), "a missing file or variable is found when the task starts; validation reads nothing")

	cfg["target.cluster.ssl.truststore.location"] = "${directory:/etc:passwd}"
	cfg["target.producer.linger.ms"] = "${vault:x:y}"
	cfg["emit.heartbeats.interval.seconds"] = "${env:INTERVAL}"
	errs := opts.Validate(cfg, func(k string) bool { return k == "emit.heartbeats.interval.seconds" })
	require.Equal(t, []string{"target.cluster.ssl.truststore.location: ${directory:/etc:passwd}: the path is outside the directories config providers may read (--config-provider-allowed-paths: " + dir + ")"},
		errs["target.cluster.ssl.truststore.location"])
	require.Equal(t, []string{`target.producer.linger.ms: ${vault:x:y}: unknown config provider "vault": kmirror has env, file, directory`},
		errs["target.producer.linger.ms"])
	require.Len(t, errs["emit.heartbeats.interval.seconds"], 1)
	require.Contains(t, errs["emit.heartbeats.interval.seconds"][0], "config provider references are resolved in client settings only")
	require.Len(t, errs, 3)

	cfg = map[string]string{"connector.class": heartbeatClass, "target.cluster.bootstrap.servers": "${env:B}"}
	require.Equal(t, []string{"target.cluster.bootstrap.servers: ${env:B}: the env config provider is not enabled on this worker (--config-providers: none is)"},
		Options{}.Validate(cfg, nil)["target.cluster.bootstrap.servers"])
}

func TestValidateRefusesSealedLookAlikes(t *testing.T) {
	cfg := map[string]string{"connector.class": heartbeatClass, "target.cluster.bootstrap.servers": "b:1",
		"target.cluster.ssl.key.password": "kmirror:aesgcm:v1:deadbeef:AAAA"}
	require.Equal(t, []string{"target.cluster.ssl.key.password: values starting with kmirror:aesgcm: are reserved for secrets kmirror encrypts at rest"},
		Options{}.Validate(cfg, nil)["target.cluster.ssl.key.password"])
}

// TestClientHidesEveryResolvedValue resolves a marker through each provider (env, file, directory) into every
// string setting a replication consumer can be given, Java's and librdkafka's, each on its own: whatever the
// setting makes of it, the marker is in Options.Hidden afterwards (the logs and statuses hide what it holds),
// and in no error. client.id is refused outright.
func TestClientHidesEveryResolvedValue(t *testing.T) {
	const marker = "mrk-7f3a9c"
	opts, dir := providerOptions(t, map[string]string{"MARKER": marker + "-env"})
	props := filepath.Join(dir, "m.properties")
	require.NoError(t, os.WriteFile(props, []byte("v="+marker+"-file\n"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "v"), []byte(marker+"-dir\n"), 0o600))
	refs := []string{"${env:MARKER}", "${file:" + props + ":v}", "${directory:" + dir + ":v}"}

	keys := map[string]bool{}
	for k, p := range libProperties {
		if p.kind == libString {
			keys[k] = true
		}
	}
	for k := range javaKeys {
		keys[k] = true
	}
	n := 0
	for key := range keys {
		for _, ref := range refs {
			n++
			opts.Hidden = &redact.Values{}
			cfg := map[string]string{
				"connector.class":                  "org.apache.kafka.connect.mirror.MirrorSourceConnector",
				"source.cluster.bootstrap.servers": "a:1",
				"source.consumer." + key:           ref,
			}
			_, err := opts.Client(ReplicationConsumer, cfg, nil, func(id string) string { return id })
			if key == KeyClientID {
				require.ErrorContains(t, err, "source.consumer.client.id: "+clientIDReferenceMsg)
				continue
			}
			if err != nil {
				require.NotContains(t, err.Error(), marker, key)
			}
			require.Equal(t, "x [hidden] y", opts.Hidden.String("x "+strings.TrimSpace(resolvedFor(ref, marker))+" y"), "%s=%s", key, ref)
		}
	}
	require.Greater(t, n, 300, "every string setting was tried")
}

func resolvedFor(ref, marker string) string {
	switch {
	case strings.HasPrefix(ref, "${env:"):
		return marker + "-env"
	case strings.HasPrefix(ref, "${file:"):
		return marker + "-file"
	}
	return marker + "-dir"
}
