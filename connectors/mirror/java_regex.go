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
