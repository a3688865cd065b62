package mirror

import "strings"

// defaultPolicy is DefaultReplicationPolicy: remote topics are "<sourceAlias><separator><topic>".
type defaultPolicy struct {
	separator string
	// internalSeparator is the separator used in checkpoints and offset-syncs topic names (KIP-949).
	internalSeparator string
}

func newDefaultPolicy(props map[string]string) defaultPolicy {
	p := defaultPolicy{separator: DefaultReplicationPolicySeparator, internalSeparator: DefaultReplicationPolicySeparator}
	sep, ok := props[ReplicationPolicySeparatorConfig]
	if !ok {
		// Java reads the internal-separator flag only when a separator is configured.
		return p
	}
	p.separator, p.internalSeparator = sep, sep
	if enabled, ok := props[InternalTopicSeparatorEnabledConfig]; ok && !parseJavaBoolean(enabled) {
		p.internalSeparator = DefaultReplicationPolicySeparator
	}
	return p
}

// parseJavaBoolean is Boolean.parseBoolean: "true" in any case is true, anything else false.
func parseJavaBoolean(s string) bool {
	return strings.EqualFold(s, "true")
}

func (p defaultPolicy) FormatRemoteTopic(sourceAlias, topic string) string {
	return sourceAlias + p.separator + topic
}

// TopicSource reproduces Java's Pattern.split(topic) on the quoted separator: trailing empty parts are
// dropped, a leading empty part is kept, and fewer than two parts means "not remote". So "abc." and
// "a.." are not remote, "a..b" comes from "a" and ".abc" from the empty alias.
func (p defaultPolicy) TopicSource(topic string) (string, bool) {
	parts := strings.Split(topic, p.separator)
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 2 {
		return "", false
	}
	return parts[0], true
}

func (p defaultPolicy) UpstreamTopic(topic string) (string, bool) {
	source, ok := p.TopicSource(topic)
	if !ok {
		return "", false
	}
	return topic[len(source)+len(p.separator):], true
}

func (p defaultPolicy) OriginalTopic(topic string) string { return originalTopic(p, topic) }

func (p defaultPolicy) HeartbeatsTopic() string { return "heartbeats" }

func (p defaultPolicy) OffsetSyncsTopic(clusterAlias string) string {
	return "mm2-offset-syncs" + p.internalSeparator + clusterAlias + p.internalSuffix()
}

func (p defaultPolicy) CheckpointsTopic(clusterAlias string) string {
	return clusterAlias + p.checkpointsSuffix()
}

func (p defaultPolicy) IsHeartbeatsTopic(topic string) bool { return isHeartbeatsTopic(p, topic) }

func (p defaultPolicy) IsCheckpointsTopic(topic string) bool {
	return strings.HasSuffix(topic, p.checkpointsSuffix())
}

func (p defaultPolicy) IsMM2InternalTopic(topic string) bool {
	return strings.HasSuffix(topic, p.internalSuffix())
}

func (p defaultPolicy) IsInternalTopic(topic string) bool { return isInternalTopic(p, topic) }

func (p defaultPolicy) internalSuffix() string { return p.internalSeparator + "internal" }

func (p defaultPolicy) checkpointsSuffix() string {
	return p.internalSeparator + "checkpoints" + p.internalSuffix()
}
