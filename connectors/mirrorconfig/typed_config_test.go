package mirrorconfig

import (
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// parseFor parses props (plus the keys every connector requires) with plugin class's ConfigDef.
func parseFor(t *testing.T, class string, props map[string]string) configdef.Values {
	t.Helper()
	p, ok := LookupPlugin(class)
	require.True(t, ok)
	raw := map[string]string{NameConfig: "c", ConnectorClassConfig: class, SourceClusterAliasConfig: "a"}
	for k, v := range props {
		raw[k] = v
	}
	v, err := ConfigDef(p).Parse(raw)
	require.NoError(t, err)
	return v
}

func TestTypedConfigsHoldKafkaDefaults(t *testing.T) {
	src := ReadSourceConfig(parseFor(t, SourceConnectorClass, nil))
	require.Equal(t, "c", src.Name)
	require.Equal(t, 1, src.TasksMax)
	require.True(t, src.Enabled)
	require.Equal(t, "a", src.SourceClusterAlias)
	require.Equal(t, "target", src.TargetClusterAlias)
	require.Equal(t, int64(60000), src.AdminTimeoutMs)
	require.Equal(t, int64(100), src.OffsetLagMax)
	require.Equal(t, int64(1000), src.ConsumerPollTimeoutMs)
	require.Equal(t, OffsetSyncsLocationSource, src.OffsetSyncsTopicLocation)
	require.Equal(t, int16(3), src.OffsetSyncsTopicReplicationFactor)
	require.Equal(t, 2, src.ReplicationFactor)
	require.Equal(t, []string{".*"}, src.Topics)
	require.Equal(t, "org.apache.kafka.connect.mirror.DefaultReplicationPolicy", src.ReplicationPolicyClass)
	require.Empty(t, src.TransactionBoundaryIntervalMs, "a null LONG reads as zero")

	cp := ReadCheckpointConfig(parseFor(t, CheckpointConnectorClass, nil))
	require.Equal(t, int64(60), cp.EmitCheckpointsIntervalSeconds)
	require.Equal(t, int64(600), cp.RefreshGroupsIntervalSeconds)
	require.False(t, cp.SyncGroupOffsetsEnabled)
	require.Equal(t, []string{"console-consumer-.*", "connect-.*", "__.*"}, cp.GroupsExclude)

	hb := ReadHeartbeatConfig(parseFor(t, HeartbeatConnectorClass, nil))
	require.True(t, hb.EmitHeartbeatsEnabled)
	require.Equal(t, int64(1), hb.EmitHeartbeatsIntervalSeconds)
	require.Equal(t, int16(3), hb.HeartbeatsTopicReplicationFactor)
}

func TestTypedConfigsReadSetValues(t *testing.T) {
	src := ReadSourceConfig(parseFor(t, SourceConnectorClass, map[string]string{
		TasksMaxConfig: " 4", OffsetLagMaxConfig: "7", EmitOffsetSyncsEnabledConfig: "FALSE",
		OffsetSyncsTopicLocationConfig: OffsetSyncsLocationTarget, TopicsConfig: "a, b",
	}))
	require.Equal(t, 4, src.TasksMax)
	require.Equal(t, int64(7), src.OffsetLagMax)
	require.False(t, src.EmitOffsetSyncsEnabled)
	require.Equal(t, OffsetSyncsLocationTarget, src.OffsetSyncsTopicLocation)
	require.Equal(t, []string{"a", "b"}, src.Topics)
}

// TestTypedConfigsCoverTheDefinitions shows each struct has a field for every key of its connector's
// definition (other than the client security keys, which clients read through their prefixes): reading
// panics on a key the definition lacks or types otherwise, and the counts match.
func TestTypedConfigsCoverTheDefinitions(t *testing.T) {
	for class, read := range map[string]func(configdef.Values) any{
		SourceConnectorClass:     func(v configdef.Values) any { return ReadSourceConfig(v) },
		CheckpointConnectorClass: func(v configdef.Values) any { return ReadCheckpointConfig(v) },
		HeartbeatConnectorClass:  func(v configdef.Values) any { return ReadHeartbeatConfig(v) },
	} {
		t.Run(class, func(t *testing.T) {
			p, _ := LookupPlugin(class)
			var want int
			for _, k := range ConfigDef(p).Keys() {
				if !clientSecurityKey(k.Name) {
					want++
				}
			}
			require.Equal(t, want, countFields(reflect.TypeOf(read(parseFor(t, class, nil)))))
		})
	}
}

func TestParseKmirror(t *testing.T) {
	src, _ := LookupPlugin(SourceConnectorClass)
	k, err := ParseKmirror(src, map[string]string{TaskMovesSustainConfig: "5000"})
	require.NoError(t, err)
	require.Equal(t, KmirrorConfig{TaskMovesEnabled: true, TaskMovesSustainMs: 5000, ProvenanceEnabled: true}, k)
	k, err = ParseKmirror(src, map[string]string{ProvenanceEnabledConfig: "false"})
	require.NoError(t, err)
	require.False(t, k.ProvenanceEnabled)

	_, err = ParseKmirror(src, map[string]string{TaskMovesEnabledConfig: "maybe"})
	require.EqualError(t, err, "Invalid value maybe for configuration kmirror.task.moves.enabled: Expected value to be either true or false")

	hb, _ := LookupPlugin(HeartbeatConnectorClass)
	k, err = ParseKmirror(hb, map[string]string{TaskMovesSustainConfig: "x"})
	require.NoError(t, err, "only the source connector has kmirror keys")
	require.Zero(t, k)
}

func clientSecurityKey(name string) bool {
	for _, keys := range [][]configdef.Key{clientSSLKeys(), clientSASLKeys()} {
		for _, k := range keys {
			if k.Name == name {
				return true
			}
		}
	}
	return name == "security.protocol"
}

// countFields counts a struct's fields, those of embedded structs in their place.
func countFields(t reflect.Type) int {
	n := 0
	for i := range t.NumField() {
		if f := t.Field(i); f.Anonymous {
			n += countFields(f.Type)
		} else {
			n++
		}
	}
	return n
}
