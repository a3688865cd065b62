package mirror

import "slices"

// IsCycle reports whether replicating topic into the cluster targetAlias would send it back to a
// cluster it already passed through: some hop of its upstream chain came from targetAlias. So on A->B
// both "B.x" and "C.B.x" are cycles. A policy whose upstream topic is the topic itself (identity
// policies) ends the walk: such policies cannot detect cycles.
func IsCycle(policy ReplicationPolicy, targetAlias, topic string) bool {
	for {
		source, ok := policy.TopicSource(topic)
		if !ok {
			return false
		}
		if source == targetAlias {
			return true
		}
		upstream, ok := policy.UpstreamTopic(topic)
		if !ok || upstream == topic {
			return false
		}
		topic = upstream
	}
}

// IsRemoteTopic reports whether topic was replicated from another cluster and is not internal
// (MirrorClient.isRemoteTopic).
func IsRemoteTopic(policy ReplicationPolicy, topic string) bool {
	if policy.IsInternalTopic(topic) {
		return false
	}
	_, ok := policy.TopicSource(topic)
	return ok
}

// CountHops returns how many replication hops topic is away from the cluster sourceAlias, or -1 if its
// upstream chain never reaches it (MirrorClient.countHopsForTopic). A repeated source ends the walk, so
// identity-style policies cannot loop forever.
func CountHops(policy ReplicationPolicy, topic, sourceAlias string) int {
	visited := make(map[string]bool)
	for hops := 1; ; hops++ {
		source, ok := policy.TopicSource(topic)
		if !ok {
			return -1
		}
		if source == sourceAlias {
			return hops
		}
		if visited[source] {
			return -1
		}
		visited[source] = true
		if topic, ok = policy.UpstreamTopic(topic); !ok {
			return -1
		}
	}
}

// ReplicationHops returns the fewest hops from the cluster upstreamAlias to the cluster whose topic
// names are topics, judged by its heartbeats topics, or -1 if unreachable (MirrorClient.replicationHops).
func ReplicationHops(policy ReplicationPolicy, topics []string, upstreamAlias string) int {
	best := -1
	for _, topic := range topics {
		if !policy.IsHeartbeatsTopic(topic) {
			continue
		}
		if hops := CountHops(policy, topic, upstreamAlias); hops != -1 && (best == -1 || hops < best) {
			best = hops
		}
	}
	return best
}

// UpstreamClusters returns, sorted, every cluster alias found upstream of the heartbeats topics among
// topics, however many hops away (MirrorClient.upstreamClusters).
func UpstreamClusters(policy ReplicationPolicy, topics []string) []string {
	seen := make(map[string]bool)
	for _, topic := range topics {
		if !policy.IsHeartbeatsTopic(topic) {
			continue
		}
		chain := make(map[string]bool)
		source, ok := policy.TopicSource(topic)
		for ok && !chain[source] {
			chain[source] = true
			seen[source] = true
			if topic, ok = policy.UpstreamTopic(topic); ok {
				source, ok = policy.TopicSource(topic)
			}
		}
	}
	clusters := make([]string, 0, len(seen))
	for alias := range seen {
		clusters = append(clusters, alias)
	}
	slices.Sort(clusters)
	return clusters
}

// RenameTopicPartition names an upstream consumer-group partition on the target cluster, as checkpoints
// do (MirrorCheckpointTask.renameTopicPartition): a topic that came from the target goes back to its
// original name (failback, "B.t" -> "t" on A->B); anything else gets its remote name ("t" -> "A.t").
func RenameTopicPartition(policy ReplicationPolicy, sourceAlias, targetAlias string, upstream TopicPartition) TopicPartition {
	if source, ok := policy.TopicSource(upstream.Topic); ok && source == targetAlias {
		return TopicPartition{Topic: policy.OriginalTopic(upstream.Topic), Partition: upstream.Partition}
	}
	return TopicPartition{Topic: policy.FormatRemoteTopic(sourceAlias, upstream.Topic), Partition: upstream.Partition}
}
