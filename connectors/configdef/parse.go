package configdef

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// SplitList parses a LIST value as Java does: the trimmed value "" is the empty list,
// otherwise the value is split on commas and whitespace around each comma is dropped
// (ConfigDef's "\s*,\s*" split with limit -1, so empty elements survive).
func SplitList(raw string) []string {
	trimmed := javaTrim(raw)
	if trimmed == "" {
		return []string{}
	}
	parts := strings.Split(trimmed, ",")
	for i, p := range parts {
		parts[i] = strings.TrimFunc(p, isJavaRegexSpace)
	}
	return parts
}

// ParseValue parses a raw value for the defined key name. It applies only the type rules, not
// the key's validator.
func (d *Def) ParseValue(name, raw string) (any, error) {
	k, ok := d.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("configdef: no key %q is defined", name)
	}
	return d.parseType(name, raw, k.Type)
}

// parseType is ConfigDef.parseType for string input.
func (d *Def) parseType(name, raw string, t Type) (any, error) {
	trimmed := javaTrim(raw)
	notANumber := func() error { return NewConfigError(name, raw, "Not a number of type "+string(t)) }
	switch t {
	case TypeBoolean:
		switch {
		case strings.EqualFold(trimmed, "true"):
			return true, nil
		case strings.EqualFold(trimmed, "false"):
			return false, nil
		}
		return nil, NewConfigError(name, raw, "Expected value to be either true or false")
	case TypePassword:
		return Password(trimmed), nil
	case TypeString:
		return trimmed, nil
	case TypeInt:
		n, err := parseJavaInt(trimmed, 32)
		if err != nil {
			return nil, notANumber()
		}
		return int32(n), nil
	case TypeShort:
		n, err := parseJavaInt(trimmed, 16)
		if err != nil {
			return nil, notANumber()
		}
		return int16(n), nil
	case TypeLong:
		n, err := parseJavaInt(trimmed, 64)
		if err != nil {
			return nil, notANumber()
		}
		return n, nil
	case TypeDouble:
		f, err := parseJavaDouble(trimmed)
		if err != nil {
			return nil, notANumber()
		}
		return f, nil
	case TypeList:
		return SplitList(raw), nil
	case TypeClass:
		if c, ok := d.resolveClass(trimmed); ok {
			return ClassName(c), nil
		}
		return nil, NewConfigError(name, raw, "Class "+raw+" could not be found.")
	}
	return nil, fmt.Errorf("configdef: unknown type %q of %s", t, name)
}

func (d *Def) resolveClass(name string) (string, bool) {
	if d.classes != nil {
		return d.classes(name)
	}
	return name, isJavaBinaryName(name)
}

// parseJavaInt accepts what Integer/Short/Long.parseInt accept: an optional sign and
// decimal digits, nothing else (no underscores, no whitespace, no base prefix).
func parseJavaInt(s string, bits int) (int64, error) {
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" || strings.ContainsFunc(body, func(r rune) bool { return r < '0' || r > '9' }) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseInt(s, 10, bits)
}

// parseJavaDouble accepts the forms of Double.parseDouble that matter for configs: decimal
// and scientific notation with an optional f/F/d/D suffix, NaN and [+-]Infinity.
func parseJavaDouble(s string) (float64, error) {
	switch s {
	case "NaN", "+NaN", "-NaN":
		return strconv.ParseFloat("NaN", 64)
	case "Infinity", "+Infinity", "-Infinity":
		return strconv.ParseFloat(s, 64)
	}
	body := s
	if n := len(body); n > 1 && strings.ContainsRune("fFdD", rune(body[n-1])) {
		body = body[:n-1]
	}
	if body == "" || strings.ContainsFunc(body, func(r rune) bool {
		return !(r >= '0' && r <= '9' || r == '.' || r == 'e' || r == 'E' || r == '+' || r == '-')
	}) {
		return 0, strconv.ErrSyntax
	}
	return strconv.ParseFloat(body, 64)
}

// isJavaBinaryName reports whether s looks like a Java binary class name (a.b.C, a.b.C$D).
func isJavaBinaryName(s string) bool {
	if s == "" {
		return false
	}
	for _, seg := range strings.Split(s, ".") {
		if seg == "" {
			return false
		}
		for i, r := range seg {
			ok := r == '_' || r == '$' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))
			if !ok {
				return false
			}
		}
	}
	return true
}
