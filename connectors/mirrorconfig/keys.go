package mirrorconfig

import "github.com/kmirror/kmirror/connectors/configdef"

// Prefixes the validation logic matches keys by; the key names themselves are generated (config_gen.go).
const (
	offsetSyncsTopicConfigPrefix = "offset-syncs.topic."
	offsetSyncsClientRolePrefix  = "offset-syncs-"
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
