// Package configdef is Kafka's ConfigDef (clients/.../common/config/ConfigDef.java) rebuilt in Go,
// together with the JSON shapes Kafka Connect's REST API uses to describe and validate configs.
//
// # What it reproduces
//
// A Def is an ordered set of Keys. Each Key has a Type, an optional default, an optional
// Validator, and the documentation metadata Connect shows in
// GET /connector-plugins/{plugin}/config (importance, group, order in group, width, display
// name, dependents).
//
// Parse turns raw string properties into typed Values with Java's rules: strings are trimmed
// the way java.lang.String.trim does, LIST values are split on commas with surrounding
// whitespace removed, numbers must fit their Java width, booleans are case-insensitive, and
// CLASS values are resolved through a ClassResolver. Errors carry Java's exact texts, because
// REST clients and humans compare them with what a Java Connect worker says:
//
//	Invalid value abc for configuration tasks.max: Not a number of type INT
//	Missing required configuration "x" which has no default value.
//
// Validate follows ConfigDef.validateAll: it never stops at the first problem, produces one
// ConfigValue per defined key and, like Java, still runs a key's validator when parsing failed
// (with a null value), which is why "tasks.max=abc" yields two messages.
//
// # Typed values
//
// Parsed values use these Go types: STRING string, INT int32, SHORT int16, LONG int64,
// DOUBLE float64, BOOLEAN bool, LIST []string, CLASS ClassName, PASSWORD Password.
// A nil value is Java's null.
//
// # REST shapes
//
// ConfigKeyInfo, ConfigValueInfo, ConfigInfo and ConfigInfos marshal with the field names and
// field order Connect's Jackson output uses. Some documentation strings contain '<' and '>':
// encode with json.Encoder.SetEscapeHTML(false) to get Connect's bytes rather than \u003c.
package configdef
