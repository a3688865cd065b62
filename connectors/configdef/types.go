package configdef

// Type is the type of a config key, named as Java's ConfigDef.Type constants are.
type Type string

// The config types Kafka defines.
const (
	TypeBoolean  Type = "BOOLEAN"
	TypeString   Type = "STRING"
	TypeInt      Type = "INT"
	TypeShort    Type = "SHORT"
	TypeLong     Type = "LONG"
	TypeDouble   Type = "DOUBLE"
	TypeList     Type = "LIST"
	TypeClass    Type = "CLASS"
	TypePassword Type = "PASSWORD"
)

// Importance is how much a user should care about a key.
type Importance string

// The importance levels Kafka defines.
const (
	ImportanceHigh   Importance = "HIGH"
	ImportanceMedium Importance = "MEDIUM"
	ImportanceLow    Importance = "LOW"
)

// Width is a UI hint for the width of a key's input field.
type Width string

// The widths Kafka defines.
const (
	WidthNone   Width = "NONE"
	WidthShort  Width = "SHORT"
	WidthMedium Width = "MEDIUM"
	WidthLong   Width = "LONG"
)

// Password is the parsed value of a PASSWORD key. Its String method hides the secret, as
// Java's Password.toString does, so it never leaks through fmt or REST responses.
type Password string

// HiddenPassword is what a Password renders as.
const HiddenPassword = "[hidden]"

// String returns "[hidden]".
func (p Password) String() string { return HiddenPassword }

// Value returns the secret itself.
func (p Password) Value() string { return string(p) }

// ClassName is the parsed value of a CLASS key: the canonical (fully qualified) class name
// the ClassResolver returned. Java renders a Class object as "class <name>" in messages; so
// does javaString.
type ClassName string
