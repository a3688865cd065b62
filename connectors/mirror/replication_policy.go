package mirror

import (
	"errors"
	"fmt"
	"strings"
)

// Config keys read by [NewReplicationPolicy].
const (
	ReplicationPolicyClassConfig        = "replication.policy.class"
	ReplicationPolicySeparatorConfig    = "replication.policy.separator"
	InternalTopicSeparatorEnabledConfig = "replication.policy.internal.topic.separator.enabled"
	SourceClusterAliasConfig            = "source.cluster.alias"
)

// Java class names of the replication policies kmirror implements.
const (
	DefaultReplicationPolicyClass  = "org.apache.kafka.connect.mirror.DefaultReplicationPolicy"
	IdentityReplicationPolicyClass = "org.apache.kafka.connect.mirror.IdentityReplicationPolicy"
)

// DefaultReplicationPolicySeparator is the default of replication.policy.separator.
const DefaultReplicationPolicySeparator = "."

// ErrUnsupportedReplicationPolicy is returned (wrapped) when replication.policy.class names a class
// kmirror does not implement.
var ErrUnsupportedReplicationPolicy = errors.New("unsupported replication policy")

// ReplicationPolicy maps topic names between clusters, mirroring Java's
// org.apache.kafka.connect.mirror.ReplicationPolicy. Where Java returns null, methods return false.
type ReplicationPolicy interface {
	// FormatRemoteTopic returns the name topic gets on a cluster replicating from sourceAlias.
	FormatRemoteTopic(sourceAlias, topic string) string
	// TopicSource returns the alias of the cluster topic was replicated from, if it is a remote topic.
	TopicSource(topic string) (string, bool)
	// UpstreamTopic returns the name of topic one hop upstream, if it is a remote topic.
	UpstreamTopic(topic string) (string, bool)
	// OriginalTopic follows UpstreamTopic to the topic's name on the cluster it originated on.
	OriginalTopic(topic string) string
	// HeartbeatsTopic returns the name of the heartbeats topic ("heartbeats").
	HeartbeatsTopic() string
	// OffsetSyncsTopic returns the name of the offset-syncs topic named after clusterAlias.
	OffsetSyncsTopic(clusterAlias string) string
	// CheckpointsTopic returns the name of the checkpoints topic of source clusterAlias.
	CheckpointsTopic(clusterAlias string) string
	// IsHeartbeatsTopic reports whether topic is a heartbeats topic, local or replicated.
	IsHeartbeatsTopic(topic string) bool
	// IsCheckpointsTopic reports whether topic is a checkpoints topic.
	IsCheckpointsTopic(topic string) bool
	// IsMM2InternalTopic reports whether topic is one of MM2's own internal topics.
	IsMM2InternalTopic(topic string) bool
	// IsInternalTopic reports whether topic is internal to Kafka, Connect or MM2 and must never be
	// replicated.
	IsInternalTopic(topic string) bool
}

// NewReplicationPolicy builds the policy named by replication.policy.class (default
// DefaultReplicationPolicy; fully qualified and simple class names are accepted), configured as Java
// configures it from the connector's raw properties: replication.policy.separator, and only when the
// separator is given, replication.policy.internal.topic.separator.enabled; IdentityReplicationPolicy
// also reads source.cluster.alias, which it reports as the source of every non-heartbeats topic (with
// no alias configured it reports none, as Java does).
func NewReplicationPolicy(props map[string]string) (ReplicationPolicy, error) {
	class, ok := props[ReplicationPolicyClassConfig]
	if !ok {
		class = DefaultReplicationPolicyClass
	}
	base := newDefaultPolicy(props)
	switch strings.TrimSpace(class) {
	case DefaultReplicationPolicyClass, "DefaultReplicationPolicy":
		return base, nil
	case IdentityReplicationPolicyClass, "IdentityReplicationPolicy":
		alias, hasAlias := props[SourceClusterAliasConfig]
		return identityPolicy{defaultPolicy: base, sourceAlias: alias, hasSourceAlias: hasAlias}, nil
	default:
		return nil, fmt.Errorf("%s=%q: %w (supported: %s, %s)", ReplicationPolicyClassConfig, class,
			ErrUnsupportedReplicationPolicy, DefaultReplicationPolicyClass, IdentityReplicationPolicyClass)
	}
}

// The helpers below are the interface's Java default methods. Go embedding does not dispatch
// virtually, so each policy calls them with itself to get its own TopicSource/UpstreamTopic.

func originalTopic(p ReplicationPolicy, topic string) string {
	for {
		upstream, ok := p.UpstreamTopic(topic)
		if !ok || upstream == topic {
			return topic
		}
		topic = upstream
	}
}

func isHeartbeatsTopic(p ReplicationPolicy, topic string) bool {
	return p.OriginalTopic(topic) == p.HeartbeatsTopic()
}

func isInternalTopic(p ReplicationPolicy, topic string) bool {
	kafkaInternal := strings.HasPrefix(topic, "__") || strings.HasPrefix(topic, ".")
	connectInternal := strings.HasSuffix(topic, "-internal") || strings.HasSuffix(topic, ".internal")
	return p.IsMM2InternalTopic(topic) || kafkaInternal || connectInternal
}
