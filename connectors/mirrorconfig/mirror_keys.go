package mirrorconfig

import "github.com/kmirror/kmirror/connectors/configdef"

// mirrorBaseKeys are the keys MirrorConnectorConfig.BASE_CONNECTOR_CONFIG_DEF adds to Connect's
// for all three MM2 connectors, before the client security keys.
func mirrorBaseKeys() []configdef.Key {
	return []configdef.Key{
		key("enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to replicate source->target."),
		requiredKey("source.cluster.alias", configdef.TypeString, configdef.ImportanceHigh,
			"Alias of source cluster"),
		key("target.cluster.alias", configdef.TypeString, "target", configdef.ImportanceHigh,
			"Alias of target cluster. Used in metrics reporting."),
		key("admin.timeout.ms", configdef.TypeLong, 60000, configdef.ImportanceLow,
			"Timeout for administrative tasks, e.g. detecting new topics."),
		key("replication.policy.class", configdef.TypeClass, "org.apache.kafka.connect.mirror.DefaultReplicationPolicy", configdef.ImportanceLow,
			"Class which defines the remote topic naming convention."),
		key("replication.policy.separator", configdef.TypeString, ".", configdef.ImportanceLow,
			"Separator used in remote topic naming convention."),
		key("replication.policy.internal.topic.separator.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to use replication.policy.separator to control the names of topics used for checkpoints and offset syncs. By default, custom separators are used in these topic names; however, if upgrading MirrorMaker 2 from older versions that did not allow for these topic names to be customized, it may be necessary to set this property to 'false' in order to continue using the same names for those topics."),
		key("forwarding.admin.class", configdef.TypeClass, "org.apache.kafka.clients.admin.ForwardingAdmin", configdef.ImportanceLow,
			"Class which extends ForwardingAdmin to define custom cluster resource management (topics, configs, etc). The class must have a constructor with signature <code>(Map<String, Object> config)</code> that is used to configure a KafkaAdminClient and may also be used to configure clients for external systems if necessary."),
		key("metric.reporters", configdef.TypeList, "org.apache.kafka.common.metrics.JmxReporter", configdef.ImportanceLow,
			"A list of classes to use as metrics reporters. Implementing the <code>org.apache.kafka.common.metrics.MetricsReporter</code> interface allows plugging in classes that will be notified of new metric creation. When custom reporters are set and <code>org.apache.kafka.common.metrics.JmxReporter</code> is needed, it has to be explicitly added to the list."),
		validated(key("security.protocol", configdef.TypeString, "PLAINTEXT", configdef.ImportanceMedium,
			"Protocol used to communicate with brokers."),
			configdef.InCaseInsensitive("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")),
	}
}

// mirrorSourceKeys are MirrorSourceConfig's own keys.
func mirrorSourceKeys() []configdef.Key {
	return []configdef.Key{
		key("topics", configdef.TypeList, ".*", configdef.ImportanceHigh,
			"Topics to replicate. Supports comma-separated topic names and regexes."),
		key("topics.exclude", configdef.TypeList, "mm2.*\\.internal,.*\\.replica,__.*", configdef.ImportanceHigh,
			"Excluded topics. Supports comma-separated topic names and regexes. Excludes take precedence over includes."),
		key("config.properties.exclude", configdef.TypeList, "follower\\.replication\\.throttled\\.replicas,leader\\.replication\\.throttled\\.replicas,message\\.timestamp\\.difference\\.max\\.ms,message\\.timestamp\\.type,unclean\\.leader\\.election\\.enable,min\\.insync\\.replicas", configdef.ImportanceHigh,
			"Topic config properties that should not be replicated. Supports comma-separated property names and regexes."),
		topicFilterClassKey(),
		key("config.property.filter.class", configdef.TypeClass, "org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter", configdef.ImportanceLow,
			"ConfigPropertyFilter to use. Selects topic config  properties to replicate."),
		consumerPollTimeoutKey(),
		key("refresh.topics.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to periodically check for new topics and partitions."),
		key("refresh.topics.interval.seconds", configdef.TypeLong, 600, configdef.ImportanceLow,
			"Frequency of topic refresh."),
		key("sync.topic.configs.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to periodically configure remote topics to match their corresponding upstream topics."),
		key("sync.topic.configs.interval.seconds", configdef.TypeLong, 600, configdef.ImportanceLow,
			"Frequency of topic config sync."),
		key("sync.topic.acls.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to periodically configure remote topic ACLs to match their corresponding upstream topics."),
		key("sync.topic.acls.interval.seconds", configdef.TypeLong, 600, configdef.ImportanceLow,
			"Frequency of topic ACL sync."),
		key("replication.factor", configdef.TypeInt, 2, configdef.ImportanceLow,
			"Replication factor for newly created remote topics."),
		key("offset-syncs.topic.replication.factor", configdef.TypeShort, 3, configdef.ImportanceLow,
			"Replication factor for offset-syncs topic."),
		key("offset.lag.max", configdef.TypeLong, 100, configdef.ImportanceLow,
			"How out-of-sync a remote partition can be before it is resynced."),
		offsetSyncsTopicLocationKey(),
		key("emit.offset-syncs.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to store the new offset of the replicated records in offset-syncs topic or not. MirrorCheckpointConnector will not be able to sync group offsets or emit checkpoints if emit.checkpoints.enabled and/or sync.group.offsets.enabled are enabled while emit.offset-syncs.enabled is disabled."),
		key("heartbeats.replication.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to replicate the heartbeats topics even when the topic filter does not include them. If set to true, heartbeats topics identified by the replication policy will always be replicated, regardless of the topic filter configuration. If set to false, heartbeats topics will only be replicated if the topic filter allows."),
	}
}

// mirrorCheckpointKeys are MirrorCheckpointConfig's own keys.
func mirrorCheckpointKeys() []configdef.Key {
	return []configdef.Key{
		consumerPollTimeoutKey(),
		key("groups", configdef.TypeList, ".*", configdef.ImportanceHigh,
			"Consumer groups to replicate. Supports comma-separated group IDs and regexes."),
		key("groups.exclude", configdef.TypeList, "console-consumer-.*,connect-.*,__.*", configdef.ImportanceHigh,
			"Exclude groups. Supports comma-separated group IDs and regexes. Excludes take precedence over includes."),
		key("group.filter.class", configdef.TypeClass, "org.apache.kafka.connect.mirror.DefaultGroupFilter", configdef.ImportanceLow,
			"GroupFilter to use. Selects consumer groups to replicate."),
		key("refresh.groups.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to periodically check for new consumer groups."),
		validated(key("refresh.groups.interval.seconds", configdef.TypeLong, 600, configdef.ImportanceLow,
			"Frequency of group refresh."),
			// Java accepts a negative interval and then schedules nothing sensible; kmirror says so.
			configdef.AtLeast(int64(0))),
		key("emit.checkpoints.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to replicate consumer offsets to target cluster."),
		validated(key("emit.checkpoints.interval.seconds", configdef.TypeLong, 60, configdef.ImportanceLow,
			"Frequency of checkpoints."),
			// Java accepts a negative interval and then schedules nothing sensible; kmirror says so.
			configdef.AtLeast(int64(0))),
		key("sync.group.offsets.enabled", configdef.TypeBoolean, false, configdef.ImportanceLow,
			"Whether to periodically write the translated offsets to __consumer_offsets topic in target cluster, as long as no active consumers in that group are connected to the target cluster"),
		validated(key("sync.group.offsets.interval.seconds", configdef.TypeLong, 60, configdef.ImportanceLow,
			"Frequency of consumer group offset sync."),
			// Java accepts a negative interval and then schedules nothing sensible; kmirror says so.
			configdef.AtLeast(int64(0))),
		key("checkpoints.topic.replication.factor", configdef.TypeShort, 3, configdef.ImportanceLow,
			"Replication factor for checkpoints topic."),
		offsetSyncsTopicLocationKey(),
		topicFilterClassKey(),
	}
}

// mirrorHeartbeatKeys are MirrorHeartbeatConfig's own keys.
func mirrorHeartbeatKeys() []configdef.Key {
	return []configdef.Key{
		key("emit.heartbeats.enabled", configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether to emit heartbeats to target cluster."),
		key("emit.heartbeats.interval.seconds", configdef.TypeLong, 1, configdef.ImportanceLow,
			"Frequency of heartbeats."),
		key("heartbeats.topic.replication.factor", configdef.TypeShort, 3, configdef.ImportanceLow,
			"Replication factor for heartbeats topic."),
	}
}

// The keys MirrorSourceConfig and MirrorCheckpointConfig both define, from constants they share.

func topicFilterClassKey() configdef.Key {
	return key(TopicFilterClassConfig, configdef.TypeClass, "org.apache.kafka.connect.mirror.DefaultTopicFilter", configdef.ImportanceLow,
		"TopicFilter to use. Selects topics to replicate.")
}

func consumerPollTimeoutKey() configdef.Key {
	return key(ConsumerPollTimeoutMsConfig, configdef.TypeLong, 1000, configdef.ImportanceLow,
		"Timeout when polling source cluster.")
}

func offsetSyncsTopicLocationKey() configdef.Key {
	return validated(key(OffsetSyncsTopicLocationConfig, configdef.TypeString, "source", configdef.ImportanceLow,
		"The location (source/target) of the offset-syncs topic."),
		configdef.In(OffsetSyncsLocationSource, OffsetSyncsLocationTarget))
}
