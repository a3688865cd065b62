package mirrorconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPlugins(t *testing.T) {
	ps := Plugins()
	require.Len(t, ps, 3)
	require.Equal(t, []string{CheckpointConnectorClass, HeartbeatConnectorClass, SourceConnectorClass},
		[]string{ps[0].Class, ps[1].Class, ps[2].Class})
	for _, p := range ps {
		require.Equal(t, "source", p.Type)
		require.Equal(t, "4.1.1", p.Version)
		require.True(t, p.Own.Has("name"))
		require.True(t, p.Own.Has("source.cluster.alias"))
		require.False(t, p.Own.Has("exactly.once.support"), "framework keys are not the plugin's own")
	}
}

func TestLookupPlugin(t *testing.T) {
	tests := []struct {
		in   string
		want string
	}{
		{"org.apache.kafka.connect.mirror.MirrorSourceConnector", SourceConnectorClass},
		{"MirrorSourceConnector", SourceConnectorClass},
		{"MirrorSource", SourceConnectorClass},
		{"MirrorCheckpoint", CheckpointConnectorClass},
		{"MirrorHeartbeatConnector", HeartbeatConnectorClass},
		{"mirrorsource", ""},
		{"Mirror", ""},
		{"FileStreamSink", ""},
		{"", ""},
	}
	for _, tc := range tests {
		p, ok := LookupPlugin(tc.in)
		require.Equal(t, tc.want != "", ok, tc.in)
		require.Equal(t, tc.want, p.Class, tc.in)
	}
}

func TestConfigDefOrder(t *testing.T) {
	names := ConfigDef(mustPlugin(t, HeartbeatConnectorClass)).Names()
	require.Equal(t, []string{"name", "connector.class", "connector.plugin.version", "tasks.max"}, names[:4])
	require.Equal(t, []string{
		"emit.heartbeats.enabled", "emit.heartbeats.interval.seconds", "heartbeats.topic.replication.factor",
		"topic.creation.groups", "exactly.once.support", "transaction.boundary", "transaction.boundary.interval.ms", "offsets.storage.topic",
	}, names[len(names)-8:])
}
