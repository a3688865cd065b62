package configdef

// ConfigError is Java's ConfigException: its message is the exact text Connect reports.
type ConfigError struct {
	msg string
}

// Error returns the message.
func (e *ConfigError) Error() string { return e.msg }

// NewConfigError builds the message of Java's ConfigException(name, value, message):
// "Invalid value <value> for configuration <name>[: <message>]". The value is rendered as
// Java's String.valueOf would render the equivalent Java object.
func NewConfigError(name string, value any, message string) *ConfigError {
	msg := "Invalid value " + JavaString(value) + " for configuration " + name
	if message != "" {
		msg += ": " + message
	}
	return &ConfigError{msg: msg}
}

// ConfigErrorf wraps a bare message, like Java's ConfigException(String message).
func ConfigErrorf(message string) *ConfigError {
	return &ConfigError{msg: message}
}

// MissingRequired is the error for a key without default that was not given.
func MissingRequired(name string) *ConfigError {
	return &ConfigError{msg: "Missing required configuration \"" + name + "\" which has no default value."}
}
