package mirror

import "strings"

// identityPolicy is IdentityReplicationPolicy: topics keep their names on the target, except topics
// that look like heartbeats, which are named as DefaultReplicationPolicy names them so heartbeats from
// different clusters stay apart. Because names carry no origin, it cannot detect cycles.
type identityPolicy struct {
	defaultPolicy
	sourceAlias    string
	hasSourceAlias bool
}

// looksLikeHeartbeat matches any name ending in "heartbeats" (so "myheartbeats" too), as Java does.
func (p identityPolicy) looksLikeHeartbeat(topic string) bool {
	return strings.HasSuffix(topic, p.HeartbeatsTopic())
}

func (p identityPolicy) FormatRemoteTopic(sourceAlias, topic string) string {
	if p.looksLikeHeartbeat(topic) {
		return p.defaultPolicy.FormatRemoteTopic(sourceAlias, topic)
	}
	return topic
}

func (p identityPolicy) TopicSource(topic string) (string, bool) {
	if p.looksLikeHeartbeat(topic) {
		return p.defaultPolicy.TopicSource(topic)
	}
	return p.sourceAlias, p.hasSourceAlias
}

func (p identityPolicy) UpstreamTopic(topic string) (string, bool) {
	if p.looksLikeHeartbeat(topic) {
		return p.defaultPolicy.UpstreamTopic(topic)
	}
	return topic, true
}

func (p identityPolicy) OriginalTopic(topic string) string { return originalTopic(p, topic) }

func (p identityPolicy) IsHeartbeatsTopic(topic string) bool { return isHeartbeatsTopic(p, topic) }

func (p identityPolicy) IsInternalTopic(topic string) bool { return isInternalTopic(p, topic) }
