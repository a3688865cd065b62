package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func mustTopicFilter(t *testing.T, props map[string]string) *TopicFilter {
	t.Helper()
	f, err := NewTopicFilter(props)
	require.NoError(t, err)
	return f
}

func acceptAll(t *testing.T) *TopicFilter {
	return mustTopicFilter(t, map[string]string{TopicsConfig: ".*", TopicsExcludeConfig: ""})
}

func rejectAll(t *testing.T) *TopicFilter {
	return mustTopicFilter(t, map[string]string{TopicsConfig: ""})
}

func TestShouldReplicateWithDefaults(t *testing.T) {
	s := TopicSelector{Policy: mustPolicy(t, nil), Filter: mustTopicFilter(t, nil), TargetAlias: "B", HeartbeatsReplication: true}
	for topic, want := range map[string]bool{
		"topic1":                      true,
		"_schemas":                    true,
		"connect-offsets":             true,
		"heartbeats":                  true,
		"C.heartbeats":                true,
		"C.topic1":                    true,
		"__consumer_offsets":          false,
		"__transaction_state":         false,
		"mm2-offset-syncs.B.internal": false,
		"mm2-offsets.A.internal":      false,
		"A.checkpoints.internal":      false,
		"connect-status-internal":     false,
		"topic1.replica":              false,
		".hidden":                     false,
		"B.topic1":                    false,
		"C.B.topic1":                  false,
		"B.heartbeats":                false,
	} {
		require.Equal(t, want, s.ShouldReplicate(topic), topic)
	}
}

// MirrorSourceConnectorTest.testReplicatesHeartbeatsDespiteFilter.
func TestShouldReplicateHeartbeatsDespiteFilter(t *testing.T) {
	s := TopicSelector{Policy: mustPolicy(t, nil), Filter: rejectAll(t), TargetAlias: "target", HeartbeatsReplication: true}
	require.True(t, s.ShouldReplicate("heartbeats"))
	require.True(t, s.ShouldReplicate("us-west.heartbeats"))
	require.False(t, s.ShouldReplicate("topic1"))

	s.Policy = mustPolicy(t, map[string]string{ReplicationPolicySeparatorConfig: "_"})
	require.True(t, s.ShouldReplicate("heartbeats"))
	require.False(t, s.ShouldReplicate("us-west.heartbeats"), "not a heartbeats topic with separator _")
}

// MirrorSourceConnectorTest.testDoesNotReplicateHeartbeatsWhenDisabled and
// testReplicatesHeartbeatsWhenDisabledButFilterAllows.
func TestShouldReplicateHeartbeatsDisabled(t *testing.T) {
	s := TopicSelector{Policy: mustPolicy(t, nil), Filter: rejectAll(t), TargetAlias: "target"}
	require.False(t, s.ShouldReplicate("heartbeats"))
	require.False(t, s.ShouldReplicate("us-west.heartbeats"))

	s.Filter = acceptAll(t)
	require.True(t, s.ShouldReplicate("heartbeats"))
	require.True(t, s.ShouldReplicate("us-west.heartbeats"))
}

// MirrorSourceConnectorTest.testNoCycles.
func TestShouldReplicateNoCycles(t *testing.T) {
	s := TopicSelector{Policy: mustPolicy(t, nil), Filter: acceptAll(t), TargetAlias: "target", HeartbeatsReplication: true}
	for _, topic := range []string{"target.topic1", "target.source.topic1", "source.target.topic1",
		"target.source.target.topic1", "source.target.source.topic1"} {
		require.False(t, s.ShouldReplicate(topic), topic)
	}
	require.True(t, s.ShouldReplicate("topic1"))
	require.True(t, s.ShouldReplicate("source.topic1"))
}

// MirrorSourceConnectorTest.testIdentityReplication.
func TestShouldReplicateIdentityPolicy(t *testing.T) {
	s := TopicSelector{Policy: identityPolicyFor(t, "source"), Filter: acceptAll(t), TargetAlias: "target", HeartbeatsReplication: true}
	for _, topic := range []string{"target.topic1", "target.source.topic1", "source.target.topic1",
		"target.source.target.topic1", "source.target.source.topic1", "topic1", "othersource.topic1",
		"heartbeats", "othersource.heartbeats"} {
		require.True(t, s.ShouldReplicate(topic), topic)
	}
	for _, topic := range []string{"target.heartbeats", "target.source.heartbeats", "source.target.heartbeats",
		"target.source.target.heartbeats", "source.target.source.heartbeats"} {
		require.False(t, s.ShouldReplicate(topic), topic)
	}
}

func TestShouldReplicateNilFilterAcceptsOnlyHeartbeats(t *testing.T) {
	s := TopicSelector{Policy: mustPolicy(t, nil), TargetAlias: "B", HeartbeatsReplication: true}
	require.False(t, s.ShouldReplicate("topic1"))
	require.True(t, s.ShouldReplicate("heartbeats"))
}
