// Package mirrorconfig holds the config definitions of MirrorMaker 2's three connectors
// (MirrorSourceConnector, MirrorCheckpointConnector, MirrorHeartbeatConnector) as Kafka
// 4.1.1 defines them, and validates connector configs the way a Kafka Connect worker does.
//
// # Definitions
//
// Each Plugin carries its own ConfigDef, which is what the Java connector's config() returns:
// Connect's ConnectorConfig keys (name, connector.class, tasks.max, converters, transforms,
// errors.*, the 4.1 plugin version keys), MirrorConnectorConfig's common keys (aliases,
// replication policy, security.protocol and the client ssl.* and sasl.* keys), then the
// connector's own keys. ConfigDef adds SourceConnectorConfig's framework keys
// (topic.creation.groups, exactly.once.support, transaction.boundary, ...) after them, which
// is the list and order of GET /connector-plugins/{plugin}/config. Names, types, defaults,
// importance and documentation are Kafka's, checked against output of Kafka 4.1.1 itself
// (testdata/connect-4.1.1).
//
// # Typed configs
//
// Connector code reads a config through SourceConfig, CheckpointConfig or HeartbeatConfig (and KmirrorConfig
// for kmirror's own keys), never through key names: the structs and the constants naming every key are
// generated (config_gen.go, by go generate) from the Kafka 4.1.1 dumps the definitions are checked against.
//
// # Validation
//
// Validate reproduces AbstractHerder.validateConnectorConfig: the framework definition is
// validated first, then the connector's own definition and its validate() rules; a value for a
// key both define is taken from the connector, and the result lists values without a definition
// first, then every key in the framework's order followed by the connector's other keys, then
// converter settings. Error texts are Connect's, and ErrorMessage builds the 400 message of a
// create or update from the result.
//
// kmirror then adds errors for what a Java worker would accept but kmirror does not do:
// converters other than ByteArrayConverter, single message transforms and predicates,
// exactly.once.support=required, replication policies other than Default and Identity, other
// filter or admin classes, and topic/group/config-property patterns that Go's RE2 cannot
// compile once joined as "^(?:a|b)$". It also reports every JSON null value, where Connect
// forgets the message for keys the connector defines.
//
// Known differences from a Java worker: transforms and predicates are rejected without listing
// the per-alias keys (transforms.<alias>.type, ...) Connect would add; client override
// properties (producer.override.*, ...) are not listed unless the clientErrors callback reports
// errors for them; an unparseable connector.plugin.version is a validation error on that key
// rather than a failed request.
package mirrorconfig
