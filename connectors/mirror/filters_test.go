package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopicFilterDefaults(t *testing.T) {
	f := mustTopicFilter(t, nil)
	for topic, want := range map[string]bool{
		"topic1":                      true,
		"_schemas":                    true,
		"heartbeats":                  true,
		"__consumer_offsets":          false,
		"__anything":                  false,
		"mm2-offset-syncs.B.internal": false,
		"mm2-offsets.A.internal":      false,
		"mm2-configs.A.internal":      false,
		"topic1.replica":              false,
		// The 4.1 default no longer excludes every .internal / -internal name; IsInternalTopic does.
		"A.checkpoints.internal":   true,
		"connect-configs-internal": true,
	} {
		require.Equal(t, want, f.Accepts(topic), topic)
	}
}

func TestTopicFilterEmptyListsMatchNothing(t *testing.T) {
	f := mustTopicFilter(t, map[string]string{TopicsConfig: ""})
	require.False(t, f.Accepts("topic1"))
	require.False(t, f.Accepts(""))

	f = mustTopicFilter(t, map[string]string{TopicsConfig: "  ", TopicsExcludeConfig: ""})
	require.False(t, f.Accepts("topic1"))

	f = mustTopicFilter(t, map[string]string{TopicsExcludeConfig: ""})
	require.True(t, f.Accepts("__consumer_offsets"), "an empty exclude list excludes nothing")
}

func TestTopicFilterMatchesWholeName(t *testing.T) {
	f := mustTopicFilter(t, map[string]string{TopicsConfig: "topic"})
	require.True(t, f.Accepts("topic"))
	require.False(t, f.Accepts("topic1"))
	require.False(t, f.Accepts("mytopic"))

	f = mustTopicFilter(t, map[string]string{TopicsConfig: "a, b"})
	require.True(t, f.Accepts("a"))
	require.True(t, f.Accepts("b"))
	require.False(t, f.Accepts("ab"), "alternatives are anchored as a group")

	f = mustTopicFilter(t, map[string]string{TopicsConfig: "orders.*, payments", TopicsExcludeConfig: "orders\\.test"})
	require.True(t, f.Accepts("orders.eu"))
	require.True(t, f.Accepts("payments"))
	require.False(t, f.Accepts("orders.test"))
	require.False(t, f.Accepts("payments2"))
}

func TestTopicFilterDotIsAWildcard(t *testing.T) {
	f := mustTopicFilter(t, map[string]string{TopicsConfig: "topic.1"})
	require.True(t, f.Accepts("topic.1"))
	require.True(t, f.Accepts("topic-1"))
}

func TestTopicFilterTrailingCommaAddsEmptyAlternative(t *testing.T) {
	f := mustTopicFilter(t, map[string]string{TopicsConfig: "a,"})
	require.True(t, f.Accepts("a"))
	require.True(t, f.Accepts(""))
	require.False(t, f.Accepts("b"))
}

// Java compiles the joined list, so elements need not be valid on their own.
func TestTopicFilterCompilesJoinedList(t *testing.T) {
	f := mustTopicFilter(t, map[string]string{TopicsConfig: "(a, b)"})
	require.True(t, f.Accepts("a"))
	require.True(t, f.Accepts("b"))
}

func TestFilterPatternErrorNamesKeyAndPattern(t *testing.T) {
	_, err := NewTopicFilter(map[string]string{TopicsConfig: "ok, (?!tmp).*"})
	var pe *PatternError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, TopicsConfig, pe.Key)
	require.Equal(t, "(?!tmp).*", pe.Pattern)
	require.Contains(t, pe.Reason, "look-ahead")
	require.ErrorContains(t, err, "topics")
	require.ErrorContains(t, err, "(?!tmp).*")

	_, err = NewTopicFilter(map[string]string{TopicsExcludeConfig: `(\w)\1`})
	require.ErrorAs(t, err, &pe)
	require.Equal(t, TopicsExcludeConfig, pe.Key)
	require.Contains(t, pe.Reason, "back-reference")

	_, err = NewGroupFilter(map[string]string{GroupsConfig: "a++"})
	require.ErrorAs(t, err, &pe)
	require.Equal(t, GroupsConfig, pe.Key)
	require.Contains(t, pe.Reason, "possessive")

	_, err = NewConfigPropertyFilter(map[string]string{ConfigPropertiesExcludeConfig: "retention.*, [a"})
	require.ErrorAs(t, err, &pe)
	require.Equal(t, ConfigPropertiesExcludeConfig, pe.Key)
	require.Equal(t, "[a", pe.Pattern)
}

func TestGroupFilter(t *testing.T) {
	f, err := NewGroupFilter(nil)
	require.NoError(t, err)
	for group, want := range map[string]bool{
		"my-group":                      true,
		"console-consumer-12345":        false,
		"connect-MirrorSourceConnector": false,
		"__internal":                    false,
		"xconnect-foo":                  true,
	} {
		require.Equal(t, want, f.Accepts(group), group)
	}

	f, err = NewGroupFilter(map[string]string{GroupsConfig: "app-.*", GroupsExcludeConfig: "app-test"})
	require.NoError(t, err)
	require.True(t, f.Accepts("app-prod"))
	require.False(t, f.Accepts("app-test"))
	require.False(t, f.Accepts("other"))

	f, err = NewGroupFilter(map[string]string{GroupsConfig: ""})
	require.NoError(t, err)
	require.False(t, f.Accepts("my-group"))

	var nilFilter *GroupFilter
	require.False(t, nilFilter.Accepts("my-group"))
}

func TestConfigPropertyFilter(t *testing.T) {
	f, err := NewConfigPropertyFilter(nil)
	require.NoError(t, err)
	for name, want := range map[string]bool{
		"retention.ms":                            true,
		"cleanup.policy":                          true,
		"message.timestamp.before.max.ms":         true,
		"min.insync.replicas":                     false,
		"follower.replication.throttled.replicas": false,
		"leader.replication.throttled.replicas":   false,
		"message.timestamp.difference.max.ms":     false,
		"message.timestamp.type":                  false,
		"unclean.leader.election.enable":          false,
		"min.insync.replicasX":                    true,
		"minXinsync.replicas":                     true,
	} {
		require.Equal(t, want, f.ShouldReplicateConfigProperty(name), name)
	}
	require.False(t, f.ShouldReplicateSourceDefault("retention.ms"))

	f, err = NewConfigPropertyFilter(map[string]string{ConfigPropertiesExcludeConfig: "", UseDefaultsFromConfig: "source"})
	require.NoError(t, err)
	require.True(t, f.ShouldReplicateConfigProperty("min.insync.replicas"))
	require.True(t, f.ShouldReplicateSourceDefault("retention.ms"))

	f, err = NewConfigPropertyFilter(map[string]string{UseDefaultsFromConfig: "SOURCE"})
	require.NoError(t, err)
	require.False(t, f.ShouldReplicateSourceDefault("retention.ms"), "Java compares with equals")
}
