package mirror

// TopicSelector decides which source topics a source->target flow replicates
// (MirrorSourceConnector.shouldReplicateTopic).
type TopicSelector struct {
	// Policy names topics; it decides what is internal, what is a heartbeats topic and what is a cycle.
	Policy ReplicationPolicy
	// Filter is the topics / topics.exclude filter. A nil filter accepts nothing.
	Filter *TopicFilter
	// TargetAlias is the alias of the target cluster, for cycle detection.
	TargetAlias string
	// HeartbeatsReplication is heartbeats.replication.enabled: replicate heartbeats topics even when
	// Filter rejects them, so replication hops can be measured downstream.
	HeartbeatsReplication bool
}

// ShouldReplicate reports whether topic is replicated: accepted by the filter (or a heartbeats topic
// with heartbeats replication on), not internal, and not a cycle.
func (s TopicSelector) ShouldReplicate(topic string) bool {
	wanted := s.Filter.Accepts(topic) || (s.HeartbeatsReplication && s.Policy.IsHeartbeatsTopic(topic))
	return wanted && !s.Policy.IsInternalTopic(topic) && !IsCycle(s.Policy, s.TargetAlias, topic)
}
