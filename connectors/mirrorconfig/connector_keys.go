package mirrorconfig

import "github.com/kmirror/kmirror/connectors/configdef"

// connectorKeys are Connect's ConnectorConfig keys (Kafka 4.1.1), which every connector has.
// The converter and version keys have no default here: Connect fills them in from the worker
// only while validating, and the connector's own definition, which wins, leaves them null.
func connectorKeys() []configdef.Key {
	return []configdef.Key{
		{Name: NameConfig, Type: configdef.TypeString, Validator: configdef.NonEmptyStringWithoutControlChars{}, Importance: configdef.ImportanceHigh,
			Documentation: "Globally unique name to use for this connector.",
			Group:         groupCommon, OrderInGroup: 1, Width: configdef.WidthMedium, DisplayName: "Connector name"},
		{Name: ConnectorClassConfig, Type: configdef.TypeString, Importance: configdef.ImportanceHigh,
			Documentation: "Name or alias of the class for this connector. Must be a subclass of org.apache.kafka.connect.connector.Connector. If the connector is org.apache.kafka.connect.file.FileStreamSinkConnector, you can either specify this full name,  or use \"FileStreamSink\" or \"FileStreamSinkConnector\" to make the configuration a bit shorter",
			Group:         groupCommon, OrderInGroup: 2, Width: configdef.WidthLong, DisplayName: "Connector class"},
		{Name: ConnectorPluginVersionConfig, Type: configdef.TypeString, HasDefault: true, Validator: pluginVersionValidator{}, Recommender: visibleWhenSet{key: ConnectorClassConfig}, Importance: configdef.ImportanceMedium,
			Documentation: "Version of the connector.",
			Group:         groupCommon, OrderInGroup: 3, Width: configdef.WidthMedium, DisplayName: "Connector version"},
		{Name: TasksMaxConfig, Type: configdef.TypeInt, Default: 1, HasDefault: true, Validator: configdef.AtLeast(1), Importance: configdef.ImportanceHigh,
			Documentation: "Maximum number of tasks to use for this connector.",
			Group:         groupCommon, OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Tasks max"},
		{Name: "tasks.max.enforce", Type: configdef.TypeBoolean, Default: true, HasDefault: true, Importance: configdef.ImportanceLow,
			Documentation: "(Deprecated) Whether to enforce that the tasks.max property is respected by the connector. By default, connectors that generate too many tasks will fail, and existing sets of tasks that exceed the tasks.max property will also be failed. If this property is set to false, then connectors will be allowed to generate more than the maximum number of tasks, and existing sets of tasks that exceed the tasks.max property will be allowed to run. This property is deprecated and will be removed in an upcoming major release.",
			Group:         groupCommon, OrderInGroup: 5, Width: configdef.WidthShort, DisplayName: "Enforce tasks max"},
		{Name: KeyConverterConfig, Type: configdef.TypeClass, HasDefault: true, Validator: converterClassValidator{iface: converterInterface}, Importance: configdef.ImportanceLow,
			Documentation: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the keys in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.",
			Group:         groupCommon, OrderInGroup: 6, Width: configdef.WidthShort, DisplayName: "Key converter class"},
		{Name: KeyConverterPluginVersionConfig, Type: configdef.TypeString, HasDefault: true, Validator: pluginVersionValidator{}, Recommender: visibleWhenSet{key: KeyConverterConfig}, Importance: configdef.ImportanceLow,
			Documentation: "Version of the key converter.",
			Group:         groupCommon, OrderInGroup: 7, Width: configdef.WidthShort, DisplayName: "Key converter version"},
		{Name: ValueConverterConfig, Type: configdef.TypeClass, HasDefault: true, Validator: converterClassValidator{iface: converterInterface}, Importance: configdef.ImportanceLow,
			Documentation: "Converter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro.",
			Group:         groupCommon, OrderInGroup: 8, Width: configdef.WidthShort, DisplayName: "Value converter class"},
		{Name: ValueConverterPluginVersionConfig, Type: configdef.TypeString, HasDefault: true, Validator: pluginVersionValidator{}, Recommender: visibleWhenSet{key: ValueConverterConfig}, Importance: configdef.ImportanceLow,
			Documentation: "Version of the value converter.",
			Group:         groupCommon, OrderInGroup: 9, Width: configdef.WidthShort, DisplayName: "Value converter version"},
		{Name: HeaderConverterConfig, Type: configdef.TypeClass, HasDefault: true, Validator: converterClassValidator{iface: headerConverterInterface}, Importance: configdef.ImportanceLow,
			Documentation: "HeaderConverter class used to convert between Kafka Connect format and the serialized form that is written to Kafka. This controls the format of the header values in messages written to or read from Kafka, and since this is independent of connectors it allows any connector to work with any serialization format. Examples of common formats include JSON and Avro. By default, the SimpleHeaderConverter is used to serialize header values to strings and deserialize them by inferring the schemas.",
			Group:         groupCommon, OrderInGroup: 10, Width: configdef.WidthShort, DisplayName: "Header converter class"},
		{Name: HeaderConverterPluginVersionConfig, Type: configdef.TypeString, HasDefault: true, Validator: pluginVersionValidator{}, Recommender: visibleWhenSet{key: HeaderConverterConfig}, Importance: configdef.ImportanceLow,
			Documentation: "Version of the header converter.",
			Group:         groupCommon, OrderInGroup: 11, Width: configdef.WidthShort, DisplayName: "Header converter version"},
		{Name: TransformsConfig, Type: configdef.TypeList, Default: "", HasDefault: true, Validator: aliasValidator("unique transformation aliases"), Importance: configdef.ImportanceLow,
			Documentation: "Aliases for the transformations to be applied to records.",
			Group:         groupTransforms, OrderInGroup: 12, Width: configdef.WidthLong, DisplayName: "Transforms"},
		{Name: PredicatesConfig, Type: configdef.TypeList, Default: "", HasDefault: true, Validator: aliasValidator("unique predicate aliases"), Importance: configdef.ImportanceLow,
			Documentation: "Aliases for the predicates used by transformations.",
			Group:         groupPredicates, OrderInGroup: 13, Width: configdef.WidthLong, DisplayName: "Predicates"},
		{Name: "config.action.reload", Type: configdef.TypeString, Default: "restart", HasDefault: true, Validator: configdef.In("none", "restart"), Importance: configdef.ImportanceLow,
			Documentation: "The action that Connect should take on the connector when changes in external configuration providers result in a change in the connector's configuration properties. A value of 'none' indicates that Connect will do nothing. A value of 'restart' indicates that Connect should restart/reload the connector with the updated configuration properties.The restart may actually be scheduled in the future if the external configuration provider indicates that a configuration value will expire in the future.",
			Group:         groupCommon, OrderInGroup: 14, Width: configdef.WidthMedium, DisplayName: "Reload Action"},
		{Name: "errors.retry.timeout", Type: configdef.TypeLong, Default: 0, HasDefault: true, Importance: configdef.ImportanceMedium,
			Documentation: "The maximum duration in milliseconds that a failed operation will be reattempted. The default is 0, which means no retries will be attempted. Use -1 for infinite retries.",
			Group:         groupErrorHandling, OrderInGroup: 1, Width: configdef.WidthMedium, DisplayName: "Retry Timeout for Errors"},
		{Name: "errors.retry.delay.max.ms", Type: configdef.TypeLong, Default: 60000, HasDefault: true, Importance: configdef.ImportanceMedium,
			Documentation: "The maximum duration in milliseconds between consecutive retry attempts. Jitter will be added to the delay once this limit is reached to prevent thundering herd issues.",
			Group:         groupErrorHandling, OrderInGroup: 2, Width: configdef.WidthMedium, DisplayName: "Maximum Delay Between Retries for Errors"},
		{Name: "errors.tolerance", Type: configdef.TypeString, Default: "none", HasDefault: true, Validator: configdef.In("none", "all"), Importance: configdef.ImportanceMedium,
			Documentation: "Behavior for tolerating errors during connector operation. 'none' is the default value and signals that any error will result in an immediate connector task failure; 'all' changes the behavior to skip over problematic records.",
			Group:         groupErrorHandling, OrderInGroup: 3, Width: configdef.WidthShort, DisplayName: "Error Tolerance"},
		{Name: "errors.log.enable", Type: configdef.TypeBoolean, Default: false, HasDefault: true, Importance: configdef.ImportanceMedium,
			Documentation: "If true, write each error and the details of the failed operation and problematic record to the Connect application log. This is 'false' by default, so that only errors that are not tolerated are reported.",
			Group:         groupErrorHandling, OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Log Errors"},
		{Name: "errors.log.include.messages", Type: configdef.TypeBoolean, Default: false, HasDefault: true, Importance: configdef.ImportanceMedium,
			Documentation: "Whether to include in the log the Connect record that resulted in a failure. For sink records, the topic, partition, offset, and timestamp will be logged. For source records, the key and value (and their schemas), all headers, and the timestamp, Kafka topic, Kafka partition, source partition, and source offset will be logged. This is 'false' by default, which will prevent record keys, values, and headers from being written to log files.",
			Group:         groupErrorHandling, OrderInGroup: 5, Width: configdef.WidthShort, DisplayName: "Log Error Details"},
	}
}

// sourceConnectorKeys are the keys SourceConnectorConfig adds for source connectors.
func sourceConnectorKeys() []configdef.Key {
	return []configdef.Key{
		{Name: "topic.creation.groups", Type: configdef.TypeList, Default: "", HasDefault: true, Validator: aliasValidator("unique topic creation groups"), Importance: configdef.ImportanceLow,
			Documentation: "Groups of configurations for topics created by source connectors",
			Group:         groupTopicCreation, OrderInGroup: 1, Width: configdef.WidthLong, DisplayName: "Topic Creation Groups"},
		{Name: ExactlyOnceSupportConfig, Type: configdef.TypeString, Default: "requested", HasDefault: true, Validator: configdef.InCaseInsensitive("requested", "required"), Importance: configdef.ImportanceMedium,
			Documentation: "Permitted values are requested, required. If set to \"required\", forces a preflight check for the connector to ensure that it can provide exactly-once semantics with the given configuration. Some connectors may be capable of providing exactly-once semantics but not signal to Connect that they support this; in that case, documentation for the connector should be consulted carefully before creating it, and the value for this property should be set to \"requested\". Additionally, if the value is set to \"required\" but the worker that performs preflight validation does not have exactly-once support enabled for source connectors, requests to create or validate the connector will fail.",
			Group:         groupExactlyOnce, OrderInGroup: 2, Width: configdef.WidthShort, DisplayName: "Exactly once support"},
		{Name: TransactionBoundaryConfig, Type: configdef.TypeString, Default: "poll", HasDefault: true, Validator: configdef.InCaseInsensitive("poll", "interval", "connector"), Importance: configdef.ImportanceMedium,
			Documentation: "Permitted values are: poll, interval, connector. If set to 'poll', a new producer transaction will be started and committed for every batch of records that each task from this connector provides to Connect. If set to 'connector', relies on connector-defined transaction boundaries; note that not all connectors are capable of defining their own transaction boundaries, and in that case, attempts to instantiate a connector with this value will fail. Finally, if set to 'interval', commits transactions only after a user-defined time interval has passed.",
			Group:         groupExactlyOnce, OrderInGroup: 3, Width: configdef.WidthShort, DisplayName: "Transaction Boundary"},
		{Name: "transaction.boundary.interval.ms", Type: configdef.TypeLong, HasDefault: true, Validator: nullOrAtLeastZero(), Importance: configdef.ImportanceLow,
			Documentation: "If 'transaction.boundary' is set to 'interval', determines the interval for producer transaction commits by connector tasks. If unset, defaults to the value of the worker-level 'offset.flush.interval.ms' property. It has no effect if a different transaction.boundary is specified.",
			Group:         groupExactlyOnce, OrderInGroup: 4, Width: configdef.WidthShort, DisplayName: "Transaction boundary interval"},
		{Name: "offsets.storage.topic", Type: configdef.TypeString, HasDefault: true, Validator: configdef.NonEmptyString{}, Importance: configdef.ImportanceLow,
			Documentation: "The name of a separate offsets topic to use for this connector. If empty or not specified, the worker’s global offsets topic name will be used. If specified, the offsets topic will be created if it does not already exist on the Kafka cluster targeted by this connector (which may be different from the one used for the worker's global offsets topic if the bootstrap.servers property of the connector's producer has been overridden from the worker's). Only applicable in distributed mode; in standalone mode, setting this property will have no effect.",
			Group:         groupOffsetsTopic, OrderInGroup: 1, Width: configdef.WidthLong, DisplayName: "Offsets topic"},
	}
}
