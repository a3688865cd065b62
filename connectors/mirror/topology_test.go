package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestIsCycle(t *testing.T) {
	p := mustPolicy(t, nil)
	// On A->B.
	require.True(t, IsCycle(p, "B", "B.x"), "originated on the target")
	require.True(t, IsCycle(p, "B", "C.B.x"), "passed through the target upstream")
	require.False(t, IsCycle(p, "B", "C.x"))
	require.False(t, IsCycle(p, "B", "x"))
	require.False(t, IsCycle(p, "B", "A.x"))
}

// An identity policy cannot see origins, except for heartbeats.
func TestIsCycleIdentityPolicy(t *testing.T) {
	p := identityPolicyFor(t, "A")
	require.False(t, IsCycle(p, "B", "B.x"))
	require.False(t, IsCycle(p, "B", "x"))
	require.True(t, IsCycle(p, "B", "B.heartbeats"))
	require.True(t, IsCycle(p, "B", "C.B.heartbeats"))
	require.False(t, IsCycle(p, "B", "C.heartbeats"))
}

// MirrorClientTest.countHopsForTopicTest.
func TestCountHops(t *testing.T) {
	p := mustPolicy(t, nil)
	for _, tc := range []struct {
		topic, source string
		hops          int
	}{
		{"topic", "source", -1},
		{"source", "source", -1},
		{"sourcetopic", "source", -1},
		{"source1.topic", "source2", -1},
		{"source1.topic", "source1", 1},
		{"source2.source1.topic", "source2", 1},
		{"source2.source1.topic", "source1", 2},
		{"source3.source2.source1.topic", "source1", 3},
		{"source3.source2.source1.topic", "source4", -1},
	} {
		require.Equal(t, tc.hops, CountHops(p, tc.topic, tc.source), "%s from %s", tc.topic, tc.source)
	}
}

func TestCountHopsStopsOnIdentityLoop(t *testing.T) {
	require.Equal(t, -1, CountHops(identityPolicyFor(t, "A"), "topic", "B"))
	require.Equal(t, 1, CountHops(identityPolicyFor(t, "A"), "topic", "A"))
}

// MirrorClientTest.replicationHopsTest.
func TestReplicationHops(t *testing.T) {
	p := mustPolicy(t, nil)
	topics := []string{"topic1", "topic2", "heartbeats", "source1.heartbeats", "source1.source2.heartbeats", "source3.heartbeats"}
	require.Equal(t, 1, ReplicationHops(p, topics, "source1"))
	require.Equal(t, 2, ReplicationHops(p, topics, "source2"))
	require.Equal(t, 1, ReplicationHops(p, topics, "source3"))
	require.Equal(t, -1, ReplicationHops(p, topics, "source4"))
}

// MirrorClientTest.upstreamClustersTest and testIdentityReplicationUpstreamClusters.
func TestUpstreamClusters(t *testing.T) {
	topics := []string{"topic1", "topic2", "heartbeats", "source1.heartbeats", "source1.source2.heartbeats",
		"source3.source4.source5.heartbeats"}
	want := []string{"source1", "source2", "source3", "source4", "source5"}
	require.Equal(t, want, UpstreamClusters(mustPolicy(t, nil), topics))
	require.Equal(t, want, UpstreamClusters(identityPolicyFor(t, "source"), topics))
}

// MirrorClientTest.heartbeatTopicsTest / checkpointsTopicsTest / remoteTopicsTest and their identity and
// separator variants.
func TestIsRemoteTopic(t *testing.T) {
	p := mustPolicy(t, nil)
	for topic, want := range map[string]bool{
		"topic1":                         false,
		"source1.topic4":                 true,
		"source1.source2.topic5":         true,
		"source3.source4.source5.topic6": true,
		"source1.checkpoints.internal":   false,
		"__consumer_offsets":             false,
	} {
		require.Equal(t, want, IsRemoteTopic(p, topic), topic)
	}

	identity := identityPolicyFor(t, "source")
	for topic, want := range map[string]bool{
		"topic1":            true,
		"heartbeats":        false,
		"backup.heartbeats": true,
	} {
		require.Equal(t, want, IsRemoteTopic(identity, topic), "identity %s", topic)
	}

	separator := mustPolicy(t, map[string]string{ReplicationPolicySeparatorConfig: "__"})
	for topic, want := range map[string]bool{
		"topic1":                            false,
		"source1__topic4":                   true,
		"source1__source2__topic5":          true,
		"source3__source4__source5__topic6": true,
	} {
		require.Equal(t, want, IsRemoteTopic(separator, topic), "separator %s", topic)
	}
}

// MirrorCheckpointTask.renameTopicPartition on A->B.
func TestRenameTopicPartition(t *testing.T) {
	p := mustPolicy(t, nil)
	for upstream, want := range map[string]string{
		"topic3":   "A.topic3",
		"C.topic7": "A.C.topic7",
		"B.topic3": "topic3", // failback: the topic came from the target
	} {
		got := RenameTopicPartition(p, "A", "B", TopicPartition{Topic: upstream, Partition: 5})
		require.Equal(t, TopicPartition{Topic: want, Partition: 5}, got, upstream)
	}
	got := RenameTopicPartition(identityPolicyFor(t, "A"), "A", "B", TopicPartition{Topic: "topic3", Partition: 1})
	require.Equal(t, TopicPartition{Topic: "topic3", Partition: 1}, got)
}
