package mirrorconfig

import "github.com/kmirror/kmirror/connectors/configdef"

// Names of keys the validation logic refers to.
const (
	nameConfig                   = "name"
	connectorClassConfig         = "connector.class"
	connectorVersionConfig       = "connector.plugin.version"
	tasksMaxConfig               = "tasks.max"
	keyConverterConfig           = "key.converter"
	keyConverterVersionConfig    = "key.converter.plugin.version"
	valueConverterConfig         = "value.converter"
	valueConverterVersionConfig  = "value.converter.plugin.version"
	headerConverterConfig        = "header.converter"
	headerConverterVersionConfig = "header.converter.plugin.version"
	transformsConfig             = "transforms"
	predicatesConfig             = "predicates"
	exactlyOnceSupportConfig     = "exactly.once.support"
	transactionBoundaryConfig    = "transaction.boundary"

	enabledConfig                 = "enabled"
	replicationPolicyClassConfig  = "replication.policy.class"
	emitOffsetSyncsEnabledConfig  = "emit.offset-syncs.enabled"
	emitCheckpointsEnabledConfig  = "emit.checkpoints.enabled"
	offsetSyncsTopicConfigPrefix  = "offset-syncs.topic."
	offsetSyncsClientRolePrefix   = "offset-syncs-"
	topicsConfig                  = "topics"
	topicsExcludeConfig           = "topics.exclude"
	groupsConfig                  = "groups"
	groupsExcludeConfig           = "groups.exclude"
	configPropertiesExcludeConfig = "config.properties.exclude"

	offsetSyncsLocationSource = "source"
	offsetSyncsLocationTarget = "target"
)

// Groups Connect's framework keys belong to, in the order Connect lists them.
const (
	groupCommon        = "Common"
	groupTransforms    = "Transforms"
	groupPredicates    = "Predicates"
	groupErrorHandling = "Error Handling"
	groupTopicCreation = "Topic Creation"
	groupExactlyOnce   = "Exactly Once Support"
	groupOffsetsTopic  = "offsets.topic"
)

// key is Java's short define(name, type, default, importance, doc), which MM2 and the client
// security configs use: no group, no width, the name as display name. A nil def is a
// default of null.
func key(name string, t configdef.Type, def any, importance configdef.Importance, doc string) configdef.Key {
	return configdef.Key{Name: name, Type: t, Default: def, HasDefault: true, Importance: importance, Documentation: doc}
}

// requiredKey is the short define without a default.
func requiredKey(name string, t configdef.Type, importance configdef.Importance, doc string) configdef.Key {
	return configdef.Key{Name: name, Type: t, Importance: importance, Documentation: doc}
}

// validated attaches a validator to a key.
func validated(k configdef.Key, v configdef.Validator) configdef.Key {
	k.Validator = v
	return k
}
