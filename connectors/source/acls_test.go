package source

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

func plannerTestSelector(t *testing.T, props map[string]string) mirror.TopicSelector {
	t.Helper()
	policy, err := mirror.NewReplicationPolicy(props)
	require.NoError(t, err)
	filter, err := mirror.NewTopicFilter(props)
	require.NoError(t, err)
	return mirror.TopicSelector{Policy: policy, Filter: filter, TargetAlias: "target", HeartbeatsReplication: true}
}

func plannerACL(topic string, op kafka.ACLOperation, perm kafka.ACLPermission) kafka.TopicACL {
	return kafka.TopicACL{Topic: topic, PatternType: kafka.ACLPatternLiteral, Principal: "User:kafka", Host: "*",
		Operation: op, Permission: perm}
}

// MirrorSourceConnectorTest.testAclFiltering and testAclTransformation, plus the filters syncTopicAcls
// applies before the transformation.
func TestSourceRemoteTopicACLs(t *testing.T) {
	selector := plannerTestSelector(t, map[string]string{"topics": ".*"})
	remote := func(acls ...kafka.TopicACL) []kafka.TopicACL { return remoteTopicACLs(acls, selector, "source") }

	require.Empty(t, remote(plannerACL("test_topic", kafka.ACLOperationWrite, kafka.ACLAllow)), "ALLOW WRITE is not replicated")

	require.Equal(t, []kafka.TopicACL{plannerACL("source.test_topic", kafka.ACLOperationRead, kafka.ACLAllow)},
		remote(plannerACL("test_topic", kafka.ACLOperationAll, kafka.ACLAllow)),
		"ALLOW ALL is replicated as ALLOW READ on the remote topic")

	require.Equal(t, []kafka.TopicACL{plannerACL("source.test_topic", kafka.ACLOperationAll, kafka.ACLDeny)},
		remote(plannerACL("test_topic", kafka.ACLOperationAll, kafka.ACLDeny)), "DENY ALL is copied as is")
	require.Equal(t, []kafka.TopicACL{plannerACL("source.test_topic", kafka.ACLOperationWrite, kafka.ACLDeny)},
		remote(plannerACL("test_topic", kafka.ACLOperationWrite, kafka.ACLDeny)), "DENY WRITE is copied as is")
	require.Equal(t, []kafka.TopicACL{plannerACL("source.test_topic", "DESCRIBE_CONFIGS", kafka.ACLAllow)},
		remote(plannerACL("test_topic", "DESCRIBE_CONFIGS", kafka.ACLAllow)), "other operations are copied as is")

	prefixed := plannerACL("test_", kafka.ACLOperationRead, kafka.ACLAllow)
	prefixed.PatternType = kafka.ACLPatternPrefixed
	require.Empty(t, remote(prefixed), "only LITERAL bindings are synced")

	require.Empty(t, remote(
		plannerACL("__consumer_offsets", kafka.ACLOperationRead, kafka.ACLAllow),
		plannerACL("target.topic1", kafka.ACLOperationRead, kafka.ACLAllow),
		plannerACL("mm2-offset-syncs.target.internal", kafka.ACLOperationRead, kafka.ACLAllow),
	), "internal topics and cycles are not replicated, so neither are their ACLs")

	require.Equal(t, []kafka.TopicACL{plannerACL("source.*", kafka.ACLOperationRead, kafka.ACLAllow)},
		remote(plannerACL("*", kafka.ACLOperationRead, kafka.ACLAllow)), "a literal * is judged as a topic named *, as in MM2")

	require.Equal(t, []kafka.TopicACL{plannerACL("source.t", kafka.ACLOperationRead, kafka.ACLAllow)},
		remote(plannerACL("t", kafka.ACLOperationAll, kafka.ACLAllow), plannerACL("t", kafka.ACLOperationRead, kafka.ACLAllow)),
		"bindings that become identical are created once")

	filtered := plannerTestSelector(t, map[string]string{"topics": "orders.*"})
	require.Empty(t, remoteTopicACLs([]kafka.TopicACL{plannerACL("payments", kafka.ACLOperationRead, kafka.ACLAllow)}, filtered, "source"),
		"topics the filter rejects keep their ACLs to themselves")
}
