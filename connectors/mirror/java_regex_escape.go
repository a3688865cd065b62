package mirror

// The escapes of a Java regular expression (\Q..\E, octal, \u, \x, \p{..}) in RE2 syntax, for the
// translator in java_regex.go.

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// Java regular expression escapes (\\Q..\\E, octal, \\u, \\x, \\p{..}) as Go RE2 syntax (java_regex.go).

// escape translates the escape sequence starting at the backslash at t.pos.
func (t *javaRegexTranslator) escape(inClass bool) (string, error) {
	start := t.pos
	r, ok := t.at(t.pos + 1)
	if !ok {
		return "", errors.New("trailing backslash")
	}
	t.pos += 2
	switch {
	case r == 'Q':
		return t.quoted(), nil
	case r >= '1' && r <= '9':
		return "", fmt.Errorf("back-reference \\%c at index %d is not supported by RE2", r, start)
	case r == 'k':
		if next, _ := t.at(t.pos); next == '<' {
			return "", fmt.Errorf("named back-reference at index %d is not supported by RE2", start)
		}
	case r == '0':
		return t.octal(start)
	case r == 'u':
		return t.unicodeEscape(start)
	case r == 'x':
		return t.hexEscape(), nil
	case r == 'c':
		c, ok := t.at(t.pos)
		if !ok {
			return "", fmt.Errorf("control escape \\c at index %d needs a character", start)
		}
		t.pos++
		return codePoint(c ^ 64), nil
	case r == 'e':
		return codePoint(0x1B), nil
	case r == 's' || r == 'S' || r == 'v' || r == 'V' || r == 'h' || r == 'H':
		return predefinedSet(unicode.ToLower(r)).render(unicode.IsUpper(r), inClass)
	case r == 'p' || r == 'P':
		return t.property(start, r == 'P', inClass)
	case r == 'R' && !inClass:
		return `(?:\r\n|[\n\x0B\f\r\x{85}\x{2028}\x{2029}])`, nil
	case r == 'Z':
		return "", fmt.Errorf("\\Z at index %d is not supported by RE2", start)
	case r == 'G':
		return "", fmt.Errorf("\\G at index %d is not supported by RE2", start)
	case r == 'X':
		return "", fmt.Errorf("grapheme cluster \\X at index %d is not supported by RE2", start)
	case r == 'N':
		return "", fmt.Errorf("named character \\N at index %d is not supported by RE2", start)
	case r == 'b':
		if next, _ := t.at(t.pos); next == '{' {
			return "", fmt.Errorf("grapheme boundary \\b{ at index %d is not supported by RE2", start)
		}
	case r >= 0x80:
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return "", fmt.Errorf("unsupported escape \\%c at index %d", r, start)
		}
		// Java lets any non-alphanumeric character be escaped; RE2 only ASCII ones, and non-ASCII
		// characters are never special.
		return string(r), nil
	}
	// Shared escapes (\t \n \d \w \b \A \z \. ...) and anything RE2 will reject on its own.
	return `\` + string(r), nil
}

// quoted translates the body of \Q...\E, as Java does, into escaped literal characters.
func (t *javaRegexTranslator) quoted() string {
	var b strings.Builder
	for t.pos < len(t.src) {
		r := t.src[t.pos]
		if r == '\\' {
			if next, _ := t.at(t.pos + 1); next == 'E' {
				t.pos += 2
				return b.String()
			}
		}
		t.pos++
		b.WriteString(literal(r))
	}
	return b.String()
}

// octal translates Java's \0n, \0nn and \0mnn (m <= 3).
func (t *javaRegexTranslator) octal(start int) (string, error) {
	isOctal := func(i int) (rune, bool) {
		r, ok := t.at(i)
		return r - '0', ok && r >= '0' && r <= '7'
	}
	n, ok := isOctal(t.pos)
	if !ok {
		return "", fmt.Errorf("illegal octal escape at index %d", start)
	}
	t.pos++
	value := n
	if m, ok := isOctal(t.pos); ok {
		t.pos++
		value = value*8 + m
		if o, ok := isOctal(t.pos); ok && n <= 3 {
			t.pos++
			value = value*8 + o
		}
	}
	return codePoint(value), nil
}

// unicodeEscape translates \uXXXX, joining a surrogate pair written as two escapes, as Java does.
func (t *javaRegexTranslator) unicodeEscape(start int) (string, error) {
	read4 := func() (rune, bool) {
		if t.pos+4 > len(t.src) {
			return 0, false
		}
		var v rune
		for _, r := range t.src[t.pos : t.pos+4] {
			d, ok := hexDigit(r)
			if !ok {
				return 0, false
			}
			v = v*16 + d
		}
		t.pos += 4
		return v, true
	}
	v, ok := read4()
	if !ok {
		return "", fmt.Errorf("illegal unicode escape at index %d", start)
	}
	if v >= 0xD800 && v <= 0xDBFF {
		mark := t.pos
		if r0, _ := t.at(t.pos); r0 == '\\' {
			if r1, _ := t.at(t.pos + 1); r1 == 'u' {
				t.pos += 2
				if low, ok := read4(); ok && low >= 0xDC00 && low <= 0xDFFF {
					return codePoint(0x10000 + (v-0xD800)<<10 + (low - 0xDC00)), nil
				}
			}
		}
		t.pos = mark
	}
	return codePoint(v), nil
}

// hexEscape copies \xhh or \x{h...h}, whose syntax RE2 shares.
func (t *javaRegexTranslator) hexEscape() string {
	from := t.pos
	if r, _ := t.at(t.pos); r == '{' {
		for t.pos < len(t.src) && t.src[t.pos] != '}' {
			t.pos++
		}
		if t.pos < len(t.src) {
			t.pos++
		}
	} else {
		for i := 0; i < 2; i++ {
			if r, ok := t.at(t.pos); ok {
				if _, hex := hexDigit(r); hex {
					t.pos++
				}
			}
		}
	}
	return `\x` + string(t.src[from:t.pos])
}

// property translates \p{Name} and \P{Name}.
func (t *javaRegexTranslator) property(start int, negated, inClass bool) (string, error) {
	var name string
	r, ok := t.at(t.pos)
	switch {
	case !ok:
		return "", fmt.Errorf("\\p at index %d needs a property name", start)
	case r == '{':
		end := t.pos + 1
		for end < len(t.src) && t.src[end] != '}' {
			end++
		}
		if end >= len(t.src) {
			return "", fmt.Errorf("unclosed property name at index %d", start)
		}
		name = string(t.src[t.pos+1 : end])
		t.pos = end + 1
	default:
		name = string(r)
		t.pos++
	}
	if set, ok := posixSet(name); ok {
		return set.render(negated, inClass)
	}
	switch {
	case strings.HasPrefix(name, "java"):
		return "", fmt.Errorf("property \\p{%s} at index %d (a java.lang.Character method) is not supported by RE2", name, start)
	case strings.HasPrefix(name, "In"), strings.HasPrefix(name, "blk="), strings.HasPrefix(name, "block="):
		return "", fmt.Errorf("Unicode block \\p{%s} at index %d is not supported by RE2", name, start)
	}
	for _, prefix := range []string{"Is", "sc=", "script=", "gc=", "general_category="} {
		name = strings.TrimPrefix(name, prefix)
	}
	// Scripts and general categories are spelled alike; RE2 rejects any other name itself.
	if negated {
		return `\P{` + name + `}`, nil
	}
	return `\p{` + name + `}`, nil
}

// literal spells r as a literal in RE2, inside or outside a class. Escaping every ASCII
// non-alphanumeric character is what Java does with \Q...\E too.
func literal(r rune) string {
	if r < 0x80 && !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
		return `\` + string(r)
	}
	return string(r)
}

func codePoint(r rune) string {
	return fmt.Sprintf(`\x{%X}`, r)
}

func hexDigit(r rune) (rune, bool) {
	switch {
	case r >= '0' && r <= '9':
		return r - '0', true
	case r >= 'a' && r <= 'f':
		return r - 'a' + 10, true
	case r >= 'A' && r <= 'F':
		return r - 'A' + 10, true
	}
	return 0, false
}
