package mirror

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// translateJavaRegex rewrites a java.util.regex pattern as an RE2 pattern with the same meaning, or
// says why it cannot. Shared syntax passes through unchanged. Spellings RE2 lacks or reads differently
// but can express are rewritten: \uXXXX, \0 octal, \e, \cX, \R, \h, POSIX \p{Alpha}, and \s and \v,
// which mean other sets in RE2. Constructs RE2 cannot express (look-around, back-references,
// possessive quantifiers, atomic groups, class unions and intersections, (?U), (?x), (?d)) are
// rejected: matching other topics than the operator asked for is worse than refusing the config.
//
// Known residual differences, none of which can arise with legal Kafka topic names: Java's '.', '^'
// and '$' also treat \r, U+0085, U+2028 and U+2029 as line terminators; Java's (?i) folds ASCII only
// unless (?u) is given, while RE2 always folds Unicode; \b follows Unicode letters in Java.
func translateJavaRegex(pattern string) (string, error) {
	t := javaRegexTranslator{src: []rune(pattern)}
	if err := t.translate(); err != nil {
		return "", err
	}
	return t.out.String(), nil
}

type javaRegexTranslator struct {
	src   []rune
	pos   int
	depth int // open groups
	out   strings.Builder
}

// at returns the rune at index i, if any.
func (t *javaRegexTranslator) at(i int) (rune, bool) {
	if i < 0 || i >= len(t.src) {
		return 0, false
	}
	return t.src[i], true
}

func (t *javaRegexTranslator) translate() error {
	for t.pos < len(t.src) {
		var err error
		switch c := t.src[t.pos]; c {
		case '\\':
			var s string
			if s, err = t.escape(false); err == nil {
				t.out.WriteString(s)
			}
		case '[':
			err = t.class()
		case '(':
			err = t.group()
		case ')':
			if t.depth == 0 {
				return fmt.Errorf("unmatched ')' at index %d", t.pos)
			}
			t.depth--
			t.out.WriteRune(c)
			t.pos++
		case '*', '+', '?':
			t.out.WriteRune(c)
			t.pos++
			err = t.quantifierSuffix()
		case '{':
			err = t.repetition()
		default:
			t.out.WriteRune(c)
			t.pos++
		}
		if err != nil {
			return err
		}
	}
	if t.depth > 0 {
		return errors.New("missing ')'")
	}
	return nil
}

// quantifierSuffix handles what may follow a quantifier: '?' (lazy, shared) or '+' (possessive, Java
// only).
func (t *javaRegexTranslator) quantifierSuffix() error {
	switch r, _ := t.at(t.pos); r {
	case '+':
		return fmt.Errorf("possessive quantifier at index %d is not supported by RE2", t.pos)
	case '?':
		t.out.WriteRune(r)
		t.pos++
	}
	return nil
}

// repetition copies {n}, {n,} or {n,m}. Java rejects any other '{' outside a class, where RE2 would
// quietly read it as a literal.
func (t *javaRegexTranslator) repetition() error {
	start := t.pos
	i := start + 1
	digits := func() int {
		n := 0
		for r, ok := t.at(i); ok && r >= '0' && r <= '9'; r, ok = t.at(i) {
			i++
			n++
		}
		return n
	}
	valid := digits() > 0
	if r, _ := t.at(i); valid && r == ',' {
		i++
		digits()
	}
	if r, _ := t.at(i); !valid || r != '}' {
		return fmt.Errorf("'{' at index %d does not start a repetition {n}, {n,} or {n,m} (Java rejects it; write \\{ for a literal brace)", start)
	}
	t.out.WriteString(string(t.src[start : i+1]))
	t.pos = i + 1
	return t.quantifierSuffix()
}

func (t *javaRegexTranslator) group() error {
	start := t.pos
	t.pos++
	t.depth++
	if r, _ := t.at(t.pos); r != '?' {
		t.out.WriteByte('(')
		return nil
	}
	t.pos++
	r, ok := t.at(t.pos)
	if !ok {
		return fmt.Errorf("unterminated group at index %d", start)
	}
	switch r {
	case ':':
		t.out.WriteString("(?:")
		t.pos++
		return nil
	case '=', '!':
		return fmt.Errorf("look-ahead at index %d is not supported by RE2", start)
	case '>':
		return fmt.Errorf("atomic group at index %d is not supported by RE2", start)
	case '<':
		if next, _ := t.at(t.pos + 1); next == '=' || next == '!' {
			return fmt.Errorf("look-behind at index %d is not supported by RE2", start)
		}
		// A named group, spelled the same in RE2.
		t.out.WriteString("(?<")
		t.pos++
		return nil
	case 'P':
		return fmt.Errorf("group syntax (?P at index %d is not Java syntax", start)
	}
	return t.flags(start)
}

// flags handles (?flags) and (?flags:X). RE2 shares i, m and s. Java's u (Unicode case folding) is
// what RE2's i always does, so it is dropped; d, x and U have no RE2 equivalent, and RE2's U means
// something else (ungreedy).
func (t *javaRegexTranslator) flags(start int) error {
	var kept strings.Builder
	for {
		r, ok := t.at(t.pos)
		if !ok {
			return fmt.Errorf("unterminated group at index %d", start)
		}
		t.pos++
		switch r {
		case 'i', 'm', 's', '-':
			kept.WriteRune(r)
			continue
		case 'u':
			continue
		case 'd':
			return fmt.Errorf("flag (?d) (UNIX_LINES) at index %d has no RE2 equivalent", start)
		case 'x':
			return fmt.Errorf("flag (?x) (COMMENTS) at index %d is not supported by RE2", start)
		case 'U':
			return fmt.Errorf("flag (?U) (UNICODE_CHARACTER_CLASS) at index %d has no RE2 equivalent", start)
		case ')', ':':
			flags := strings.TrimSuffix(kept.String(), "-")
			if r == ')' {
				// A flag switch, not a group.
				t.depth--
				if flags != "" {
					t.out.WriteString("(?" + flags + ")")
				}
				return nil
			}
			t.out.WriteString("(?" + flags + ":")
			return nil
		default:
			return fmt.Errorf("unsupported group syntax at index %d", start)
		}
	}
}

func (t *javaRegexTranslator) class() error {
	start := t.pos
	t.pos++
	t.out.WriteByte('[')
	if r, _ := t.at(t.pos); r == '^' {
		t.out.WriteRune(r)
		t.pos++
	}
	for first := true; ; first = false {
		r, ok := t.at(t.pos)
		if !ok {
			return fmt.Errorf("unclosed character class at index %d", start)
		}
		next, _ := t.at(t.pos + 1)
		switch {
		case r == ']' && !first:
			t.out.WriteRune(r)
			t.pos++
			return nil
		case r == '[':
			return fmt.Errorf("nested character class at index %d (a Java union) is not supported by RE2", t.pos)
		case r == '&' && next == '&':
			return fmt.Errorf("character class intersection '&&' at index %d is not supported by RE2", t.pos)
		case r == '\\':
			s, err := t.escape(true)
			if err != nil {
				return err
			}
			t.out.WriteString(s)
		default:
			t.out.WriteRune(r)
			t.pos++
		}
	}
}

// runeSet is a sorted list of disjoint inclusive ranges.
type runeSet [][2]rune

// render spells the set (or its complement) as an RE2 class, or as class members when inside one.
func (s runeSet) render(negated, inClass bool) (string, error) {
	switch {
	case !inClass && negated:
		return "[^" + s.members() + "]", nil
	case !inClass:
		return "[" + s.members() + "]", nil
	case negated:
		return s.complement().members(), nil
	default:
		return s.members(), nil
	}
}

func (s runeSet) members() string {
	var b strings.Builder
	for _, r := range s {
		b.WriteString(codePoint(r[0]))
		if r[1] != r[0] {
			b.WriteString("-" + codePoint(r[1]))
		}
	}
	return b.String()
}

func (s runeSet) complement() runeSet {
	var out runeSet
	next := rune(0)
	for _, r := range s {
		if r[0] > next {
			out = append(out, [2]rune{next, r[0] - 1})
		}
		next = r[1] + 1
	}
	if next <= unicode.MaxRune {
		out = append(out, [2]rune{next, unicode.MaxRune})
	}
	return out
}

// predefinedSet returns the set of a Java escape RE2 lacks or defines differently: \s (RE2's omits
// \x0B), \v (RE2's is the single character \x0B) and \h.
func predefinedSet(r rune) runeSet {
	switch r {
	case 's':
		return runeSet{{'\t', '\r'}, {' ', ' '}}
	case 'v':
		return runeSet{{'\n', '\r'}, {0x85, 0x85}, {0x2028, 0x2029}}
	default: // 'h'
		return runeSet{{'\t', '\t'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x180E, 0x180E},
			{0x2000, 0x200A}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000}}
	}
}

// posixSet returns Java's US-ASCII POSIX class \p{name}, if name is one.
func posixSet(name string) (runeSet, bool) {
	switch name {
	case "Lower":
		return runeSet{{'a', 'z'}}, true
	case "Upper":
		return runeSet{{'A', 'Z'}}, true
	case "ASCII":
		return runeSet{{0, 0x7F}}, true
	case "Alpha":
		return runeSet{{'A', 'Z'}, {'a', 'z'}}, true
	case "Digit":
		return runeSet{{'0', '9'}}, true
	case "Alnum":
		return runeSet{{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}, true
	case "Punct":
		return runeSet{{'!', '/'}, {':', '@'}, {'[', '`'}, {'{', '~'}}, true
	case "Graph":
		return runeSet{{'!', '~'}}, true
	case "Print":
		return runeSet{{' ', '~'}}, true
	case "Blank":
		return runeSet{{'\t', '\t'}, {' ', ' '}}, true
	case "Cntrl":
		return runeSet{{0, 0x1F}, {0x7F, 0x7F}}, true
	case "XDigit":
		return runeSet{{'0', '9'}, {'A', 'F'}, {'a', 'f'}}, true
	case "Space":
		return runeSet{{'\t', '\r'}, {' ', ' '}}, true
	}
	return nil, false
}
