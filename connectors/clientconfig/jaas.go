package clientconfig

import (
	"errors"
	"fmt"
	"strings"
)

// jaasEntry is one login module entry of a sasl.jaas.config value.
type jaasEntry struct {
	module  string
	flag    string
	options map[string]string
}

// parseJAAS parses a sasl.jaas.config value exactly as Kafka's JaasConfig
// does, with Java's error messages, so a config kmirror accepts stays valid for
// Java MM2 and the reverse:
//
//	<LoginModuleClass> <controlFlag> (<key>=<value>)* ;
//
// Kafka tokenizes with java.io.StreamTokenizer, whose defaults have surprising
// consequences that are kept here: an unquoted value starting with a digit is a
// number token and therefore "not specified", and "/" starts a comment, so
// unquoted paths and URLs break. Users quote their values for that reason.
func parseJAAS(s string) ([]jaasEntry, error) {
	tz := &jaasTokenizer{in: []rune(s)}
	var entries []jaasEntry
	for tz.next() != tokEOF {
		e, err := parseJAASEntry(tz)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, errors.New("Login module not specified in JAAS config")
	}
	return entries, nil
}

func parseJAASEntry(tz *jaasTokenizer) (jaasEntry, error) {
	e := jaasEntry{options: map[string]string{}}
	module, hasModule := tz.sval, tz.hasSval
	if tz.next() == tokEOF {
		return e, errors.New("Login module control flag not specified in JAAS config")
	}
	if !tz.hasSval {
		return e, errors.New("Login module control flag is not available in the JAAS config")
	}
	switch strings.ToUpper(tz.sval) {
	case "REQUIRED", "REQUISITE", "SUFFICIENT", "OPTIONAL":
		e.flag = strings.ToLower(tz.sval)
	default:
		return e, fmt.Errorf("Invalid login module control flag '%s' in JAAS config", tz.sval)
	}
	for tz.next() != tokEOF && tz.ttype != ';' {
		key := "null" // what Java prints for a key that is not a word
		if tz.hasSval {
			key = tz.sval
		}
		if tz.next() != '=' || tz.next() == tokEOF || !tz.hasSval {
			return e, fmt.Errorf("Value not specified for key '%s' in JAAS config", key)
		}
		e.options[key] = tz.sval
	}
	if tz.ttype != ';' {
		return e, errors.New("JAAS config entry not terminated by semi-colon")
	}
	if !hasModule || module == "" {
		// javax.security.auth.login.AppConfigurationEntry refuses it.
		return e, errors.New("Login module not specified in JAAS config")
	}
	e.module = module
	return e, nil
}

// Token types other than single characters, as java.io.StreamTokenizer
// numbers them.
const (
	tokEOF    = -1
	tokWord   = -3
	tokNumber = -2
)

// jaasTokenizer reproduces java.io.StreamTokenizer as Kafka's JaasConfig sets
// it up: default syntax (letters and 160-255 are word characters, 0-32 white
// space, digits, '.' and '-' numeric, double and single quotes, '/' a comment
// character), plus // and /* */ comments and '-', '_', '$' as word characters.
type jaasTokenizer struct {
	in  []rune
	pos int
	// ttype is the current token: tokEOF, tokWord, tokNumber, a quote
	// character for a quoted string, or any other single character.
	ttype rune
	// sval is the text of a word or quoted string; hasSval tells it from an
	// empty quoted string, as Java's null sval does.
	sval    string
	hasSval bool
}

const (
	ctWhitespace = 1 << iota
	ctDigit
	ctAlpha
	ctQuote
	ctComment
)

func jaasCharType(c rune) int {
	switch {
	case c < 0:
		return ctWhitespace
	case c >= 256:
		return ctAlpha
	case c <= ' ':
		return ctWhitespace
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= 160, c == '_', c == '$':
		return ctAlpha
	case c == '-':
		return ctAlpha | ctDigit
	case c >= '0' && c <= '9', c == '.':
		return ctDigit
	case c == '"', c == '\'':
		return ctQuote
	case c == '/':
		return ctComment
	}
	return 0
}

func (tz *jaasTokenizer) read() rune {
	c := rune(-1)
	if tz.pos < len(tz.in) {
		c = tz.in[tz.pos]
	}
	// Moving past the end too keeps unread symmetric at EOF.
	tz.pos++
	return c
}

func (tz *jaasTokenizer) unread() { tz.pos-- }

// next reads the next token into ttype, sval and hasSval, and returns ttype.
func (tz *jaasTokenizer) next() rune {
	tz.sval, tz.hasSval = "", false
	c := tz.read()
	for jaasCharType(c)&ctWhitespace != 0 {
		if c < 0 {
			tz.ttype = tokEOF
			return tz.ttype
		}
		c = tz.read()
	}
	ct := jaasCharType(c)
	switch {
	case ct&ctDigit != 0:
		// A number: its value is never used, and it has no sval.
		if c == '-' {
			c = tz.read()
			if c != '.' && (c < '0' || c > '9') {
				tz.unread()
				tz.ttype = '-'
				return tz.ttype
			}
		}
		seenDot := false
		for {
			if c == '.' && !seenDot {
				seenDot = true
			} else if c < '0' || c > '9' {
				break
			}
			c = tz.read()
		}
		tz.unread()
		tz.ttype = tokNumber
		return tz.ttype
	case ct&ctAlpha != 0:
		var b strings.Builder
		for jaasCharType(c)&(ctAlpha|ctDigit) != 0 {
			b.WriteRune(c)
			c = tz.read()
		}
		tz.unread()
		tz.sval, tz.hasSval, tz.ttype = b.String(), true, tokWord
		return tz.ttype
	case ct&ctQuote != 0:
		tz.ttype = c
		tz.sval, tz.hasSval = tz.quoted(c), true
		return tz.ttype
	case c == '/':
		if tz.read() == '*' {
			prev := rune(0)
			for {
				c = tz.read()
				if c < 0 {
					tz.ttype = tokEOF
					return tz.ttype
				}
				if c == '/' && prev == '*' {
					return tz.next()
				}
				prev = c
			}
		}
		// "//", and since '/' is also a comment character, '/' followed by
		// anything else: the rest of the line goes. Like Java, the search for
		// the line end starts after the character already read, even if that
		// one ended the line.
		tz.skipLine()
		return tz.next()
	}
	tz.ttype = c
	return tz.ttype
}

// skipLine drops characters up to, not including, the next line end.
func (tz *jaasTokenizer) skipLine() {
	for {
		c := tz.read()
		if c == '\n' || c == '\r' || c < 0 {
			tz.unread()
			return
		}
	}
}

// quoted reads a quoted string after its opening quote. It ends at the
// matching quote, or unterminated at a line end or EOF, and understands Java's
// escapes: \a \b \f \n \r \t \v, octal \0-\377, and \ before any other
// character standing for that character.
func (tz *jaasTokenizer) quoted(quote rune) string {
	var b strings.Builder
	d := tz.read()
	for d >= 0 && d != quote && d != '\n' && d != '\r' {
		var c rune
		if d == '\\' {
			c = tz.read()
			first := c
			if c >= '0' && c <= '7' {
				c -= '0'
				c2 := tz.read()
				if c2 >= '0' && c2 <= '7' {
					c = c<<3 + (c2 - '0')
					c2 = tz.read()
					if c2 >= '0' && c2 <= '7' && first <= '3' {
						c = c<<3 + (c2 - '0')
						d = tz.read()
					} else {
						d = c2
					}
				} else {
					d = c2
				}
			} else {
				switch c {
				case 'a':
					c = 0x7
				case 'b':
					c = '\b'
				case 'f':
					c = 0xC
				case 'n':
					c = '\n'
				case 'r':
					c = '\r'
				case 't':
					c = '\t'
				case 'v':
					c = 0xB
				case -1:
					// A backslash at the very end: Java appends (char)-1.
					c = 0xFFFF
				}
				d = tz.read()
			}
		} else {
			c = d
			d = tz.read()
		}
		b.WriteRune(c)
	}
	if d != quote {
		tz.unread()
	}
	return b.String()
}
