package mirror

import "strings"

// ParseList parses a Java ConfigDef LIST value: the value is trimmed as String.trim does, an empty
// value is the empty list, and anything else is split at commas together with the whitespace around
// them (\s*,\s*). Empty elements are kept: "a," is ["a", ""].
func ParseList(value string) []string {
	trimmed := strings.TrimFunc(value, func(r rune) bool { return r <= ' ' })
	if trimmed == "" {
		return nil
	}
	parts := strings.Split(trimmed, ",")
	for i := range parts {
		if i > 0 {
			parts[i] = strings.TrimLeft(parts[i], javaWhitespace)
		}
		if i < len(parts)-1 {
			parts[i] = strings.TrimRight(parts[i], javaWhitespace)
		}
	}
	return parts
}

// javaWhitespace is Java regex \s without UNICODE_CHARACTER_CLASS.
const javaWhitespace = " \t\n\x0B\f\r"
