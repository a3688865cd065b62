package mm2file

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func readStrimzi(t *testing.T, name string) ([]Connector, []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "strimzi", name))
	require.NoError(t, err)
	cs, warnings, err := FromStrimzi(data, "")
	require.NoError(t, err)
	return cs, warnings
}

func TestStrimziV1beta2(t *testing.T) {
	cs, warnings := readStrimzi(t, "v1beta2.yaml")
	require.Len(t, cs, 3)
	require.Equal(t, "cluster-a->cluster-b.MirrorCheckpointConnector", cs[0].Name)
	src := cs[2]
	require.Equal(t, "cluster-a->cluster-b.MirrorSourceConnector", src.Name)
	want := map[string]string{
		"name": src.Name, "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector", "tasks.max": "4",
		"topics": "orders.*", "groups": ".*", "replication.factor": "-1", "sync.topic.acls.enabled": "false", "refresh.topics.interval.seconds": "600",
		"source.cluster.alias": "cluster-a", "source.cluster.bootstrap.servers": "cluster-a-kafka-bootstrap:9093",
		"source.cluster.security.protocol": "SASL_SSL", "source.cluster.sasl.mechanism": "SCRAM-SHA-512",
		"source.cluster.sasl.jaas.config":            `org.apache.kafka.common.security.scram.ScramLoginModule required username="mm2-user" password="${directory:/etc/kmirror/secrets/mm2-user:password}";`,
		"source.cluster.ssl.truststore.type":         "PEM",
		"source.cluster.ssl.truststore.certificates": "${directory:/etc/kmirror/secrets/cluster-a-cluster-ca-cert:ca.crt}",
		"target.cluster.alias":                       "cluster-b", "target.cluster.bootstrap.servers": "cluster-b-kafka-bootstrap:9093",
		"target.cluster.security.protocol": "SSL", "target.cluster.ssl.truststore.type": "PEM",
		"target.cluster.ssl.truststore.certificates":       "${directory:/etc/kmirror/secrets/cluster-b-cluster-ca-cert:ca.crt}",
		"target.cluster.ssl.keystore.type":                 "PEM",
		"target.cluster.ssl.keystore.certificate.chain":    "${directory:/etc/kmirror/secrets/mm2-b:user.crt}",
		"target.cluster.ssl.keystore.key":                  "${directory:/etc/kmirror/secrets/mm2-b:user.key}",
		"target.cluster.config.storage.replication.factor": "-1",
	}
	require.Equal(t, want, src.Config)
	require.Equal(t, "true", cs[0].Config["sync.group.offsets.enabled"])
	require.NotEmpty(t, warnings, "a trusted certificate by pattern is named in a warning")
}

func TestStrimziV1(t *testing.T) {
	cs, _ := readStrimzi(t, "v1.yaml")
	require.Len(t, cs, 2)
	src := cs[1]
	require.Equal(t, "primary->backup.MirrorSourceConnector", src.Name)
	require.Equal(t, "SASL_PLAINTEXT", src.Config["source.cluster.security.protocol"])
	require.Equal(t, "PLAIN", src.Config["source.cluster.sasl.mechanism"])
	require.Equal(t, "internal.*", src.Config["topics.exclude"])
	require.Equal(t, "3", src.Config["replication.factor"])
	require.Equal(t, "backup", src.Config["target.cluster.alias"])
	require.Equal(t, "PLAINTEXT", src.Config["target.cluster.security.protocol"])

	_, _, err := FromStrimzi([]byte("apiVersion: v1\nkind: ConfigMap\n"), "")
	require.ErrorContains(t, err, "not a KafkaMirrorMaker2 resource")
}
