package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func mustPolicy(t *testing.T, props map[string]string) ReplicationPolicy {
	t.Helper()
	p, err := NewReplicationPolicy(props)
	require.NoError(t, err)
	return p
}

func identityPolicyFor(t *testing.T, sourceAlias string) ReplicationPolicy {
	return mustPolicy(t, map[string]string{
		ReplicationPolicyClassConfig: IdentityReplicationPolicyClass,
		SourceClusterAliasConfig:     sourceAlias,
	})
}

func TestNewReplicationPolicyClassNames(t *testing.T) {
	for _, class := range []string{DefaultReplicationPolicyClass, "DefaultReplicationPolicy", " " + DefaultReplicationPolicyClass + " "} {
		p := mustPolicy(t, map[string]string{ReplicationPolicyClassConfig: class})
		require.Equal(t, "A.t", p.FormatRemoteTopic("A", "t"), class)
	}
	for _, class := range []string{IdentityReplicationPolicyClass, "IdentityReplicationPolicy"} {
		p := mustPolicy(t, map[string]string{ReplicationPolicyClassConfig: class})
		require.Equal(t, "t", p.FormatRemoteTopic("A", "t"), class)
	}
	require.Equal(t, "A.t", mustPolicy(t, nil).FormatRemoteTopic("A", "t"), "default class")
}

func TestNewReplicationPolicyRejectsUnknownClass(t *testing.T) {
	_, err := NewReplicationPolicy(map[string]string{ReplicationPolicyClassConfig: "com.example.MyPolicy"})
	require.ErrorIs(t, err, ErrUnsupportedReplicationPolicy)
	require.ErrorContains(t, err, ReplicationPolicyClassConfig)
	require.ErrorContains(t, err, "com.example.MyPolicy")

	_, err = NewReplicationPolicy(map[string]string{ReplicationPolicyClassConfig: ""})
	require.ErrorIs(t, err, ErrUnsupportedReplicationPolicy)
}

// Java's Pattern.split semantics: trailing empty strings dropped, a leading one kept.
func TestDefaultPolicyTopicSource(t *testing.T) {
	p := mustPolicy(t, nil)
	for _, tc := range []struct {
		topic, source, upstream string
		remote                  bool
	}{
		{"A.t", "A", "t", true},
		{"A.B.t", "A", "B.t", true},
		{"t", "", "", false},
		{"", "", "", false},
		{".", "", "", false},
		{"abc.", "", "", false},
		{"a..", "", "", false},
		{"a..b", "a", ".b", true},
		{".abc", "", "abc", true},
		{"..a", "", ".a", true},
	} {
		source, ok := p.TopicSource(tc.topic)
		require.Equal(t, tc.remote, ok, "TopicSource(%q)", tc.topic)
		require.Equal(t, tc.source, source, "TopicSource(%q)", tc.topic)
		upstream, ok := p.UpstreamTopic(tc.topic)
		require.Equal(t, tc.remote, ok, "UpstreamTopic(%q)", tc.topic)
		require.Equal(t, tc.upstream, upstream, "UpstreamTopic(%q)", tc.topic)
	}
}

func TestDefaultPolicyOriginalTopic(t *testing.T) {
	p := mustPolicy(t, nil)
	require.Equal(t, "t", p.OriginalTopic("t"))
	require.Equal(t, "t", p.OriginalTopic("A.t"))
	require.Equal(t, "t", p.OriginalTopic("C.B.A.t"))
}

func TestDefaultPolicyInternalTopicNames(t *testing.T) {
	p := mustPolicy(t, nil)
	require.Equal(t, "heartbeats", p.HeartbeatsTopic())
	require.Equal(t, "mm2-offset-syncs.B.internal", p.OffsetSyncsTopic("B"))
	require.Equal(t, "A.checkpoints.internal", p.CheckpointsTopic("A"))
}

// ReplicationPolicyTest.testInternalTopic.
func TestIsInternalTopic(t *testing.T) {
	p := mustPolicy(t, nil)
	require.True(t, p.IsInternalTopic("__consumer_offsets"))
	require.True(t, p.IsInternalTopic(".hiddentopic"))
	require.True(t, p.IsInternalTopic("mm2-offsets.CLUSTER.internal"))
	require.True(t, p.IsInternalTopic("mm2-offsets-CLUSTER-internal"))
	require.False(t, p.IsInternalTopic("mm2-offsets_CLUSTER_internal"))
	require.False(t, p.IsInternalTopic("_schemas"))
	require.False(t, p.IsInternalTopic("heartbeats"))
}

// MirrorClientTest.testIsHeartbeatTopic and testIsCheckpointTopic.
func TestIsHeartbeatsAndCheckpointsTopic(t *testing.T) {
	p := mustPolicy(t, nil)
	for topic, want := range map[string]bool{
		"heartbeats":                 true,
		"source1.heartbeats":         true,
		"source2.source1.heartbeats": true,
		"heartbeats!":                false,
		"!heartbeats":                false,
		"source1heartbeats":          false,
		"source1-heartbeats":         false,
	} {
		require.Equal(t, want, p.IsHeartbeatsTopic(topic), topic)
	}
	for topic, want := range map[string]bool{
		"source1.checkpoints.internal": true,
		"checkpoints.internal":         false,
		"checkpoints-internal":         false,
		"checkpoints.internal!":        false,
		"!checkpoints.internal":        false,
		"source1checkpointsinternal":   false,
	} {
		require.Equal(t, want, p.IsCheckpointsTopic(topic), topic)
	}
}

func TestCustomSeparator(t *testing.T) {
	p := mustPolicy(t, map[string]string{ReplicationPolicySeparatorConfig: "__"})
	require.Equal(t, "A__t", p.FormatRemoteTopic("A", "t"))
	source, ok := p.TopicSource("source1__source2__topic5")
	require.True(t, ok)
	require.Equal(t, "source1", source)
	upstream, _ := p.UpstreamTopic("source1__source2__topic5")
	require.Equal(t, "source2__topic5", upstream)
	_, ok = p.TopicSource("A.t")
	require.False(t, ok, "a dot is no separator any more")
	// Non-overlapping, left to right, like Java's split.
	source, _ = p.TopicSource("a___b")
	require.Equal(t, "a", source)
	upstream, _ = p.UpstreamTopic("a___b")
	require.Equal(t, "_b", upstream)
}

// ReplicationPolicyTest: KIP-949 internal topic separator, and heartbeats never affected.
func TestCustomSeparatorInternalTopics(t *testing.T) {
	for _, tc := range []struct {
		flag                          string // "" means absent
		offsetSyncs, checkpoints, mm2 string
	}{
		{"", "mm2-offset-syncs__CLUSTER__internal", "CLUSTER__checkpoints__internal", "x__internal"},
		{"true", "mm2-offset-syncs__CLUSTER__internal", "CLUSTER__checkpoints__internal", "x__internal"},
		{"false", "mm2-offset-syncs.CLUSTER.internal", "CLUSTER.checkpoints.internal", "x.internal"},
		// Boolean.parseBoolean: only "true", in any case, is true.
		{"TRUE", "mm2-offset-syncs__CLUSTER__internal", "CLUSTER__checkpoints__internal", "x__internal"},
		{"yes", "mm2-offset-syncs.CLUSTER.internal", "CLUSTER.checkpoints.internal", "x.internal"},
	} {
		props := map[string]string{ReplicationPolicySeparatorConfig: "__"}
		if tc.flag != "" {
			props[InternalTopicSeparatorEnabledConfig] = tc.flag
		}
		p := mustPolicy(t, props)
		require.Equal(t, tc.offsetSyncs, p.OffsetSyncsTopic("CLUSTER"), "flag %q", tc.flag)
		require.Equal(t, tc.checkpoints, p.CheckpointsTopic("CLUSTER"), "flag %q", tc.flag)
		require.Equal(t, "heartbeats", p.HeartbeatsTopic(), "flag %q", tc.flag)
		require.True(t, p.IsCheckpointsTopic(tc.checkpoints), "flag %q", tc.flag)
		require.True(t, p.IsMM2InternalTopic(tc.mm2), "flag %q", tc.flag)
		require.True(t, p.IsInternalTopic(tc.offsetSyncs), "flag %q", tc.flag)
	}

	on := mustPolicy(t, map[string]string{ReplicationPolicySeparatorConfig: "__"})
	require.False(t, on.IsCheckpointsTopic("CLUSTER.checkpoints.internal"))
	require.False(t, on.IsMM2InternalTopic("x.internal"))
	require.True(t, on.IsInternalTopic("x.internal"), ".internal is always internal")
	require.True(t, on.IsInternalTopic("x-internal"), "-internal is always internal")

	off := mustPolicy(t, map[string]string{ReplicationPolicySeparatorConfig: "__", InternalTopicSeparatorEnabledConfig: "false"})
	require.False(t, off.IsMM2InternalTopic("x__internal"))
	require.False(t, off.IsInternalTopic("x__internal"))
}

func TestIdentityPolicy(t *testing.T) {
	p := identityPolicyFor(t, "primary")
	require.Equal(t, "topic1", p.FormatRemoteTopic("primary", "topic1"))
	source, ok := p.TopicSource("topic1")
	require.True(t, ok)
	require.Equal(t, "primary", source)
	upstream, ok := p.UpstreamTopic("topic1")
	require.True(t, ok)
	require.Equal(t, "topic1", upstream)
	require.Equal(t, "topic1", p.OriginalTopic("topic1"))
}

// Topics ending in "heartbeats" follow DefaultReplicationPolicy, even "myheartbeats".
func TestIdentityPolicyHeartbeats(t *testing.T) {
	p := identityPolicyFor(t, "primary")
	require.Equal(t, "backup.heartbeats", p.FormatRemoteTopic("backup", "heartbeats"))
	require.Equal(t, "backup.myheartbeats", p.FormatRemoteTopic("backup", "myheartbeats"))
	source, ok := p.TopicSource("backup.heartbeats")
	require.True(t, ok)
	require.Equal(t, "backup", source)
	_, ok = p.TopicSource("heartbeats")
	require.False(t, ok)
	require.Equal(t, "heartbeats", p.OriginalTopic("b.a.heartbeats"))
	require.True(t, p.IsHeartbeatsTopic("heartbeats"))
	require.True(t, p.IsHeartbeatsTopic("backup.heartbeats"))
	require.False(t, p.IsHeartbeatsTopic("myheartbeats"))
}

func TestIdentityPolicyWithoutSourceAlias(t *testing.T) {
	p := mustPolicy(t, map[string]string{ReplicationPolicyClassConfig: IdentityReplicationPolicyClass})
	_, ok := p.TopicSource("topic1")
	require.False(t, ok)
}

func TestIdentityPolicyKeepsSeparatorForInternalTopics(t *testing.T) {
	p := mustPolicy(t, map[string]string{
		ReplicationPolicyClassConfig:     IdentityReplicationPolicyClass,
		ReplicationPolicySeparatorConfig: "_",
	})
	require.Equal(t, "A_checkpoints_internal", p.CheckpointsTopic("A"))
	require.True(t, p.IsInternalTopic("mm2-offset-syncs_B_internal"))
	require.Equal(t, "A_heartbeats", p.FormatRemoteTopic("A", "heartbeats"))
}
