package configprovider

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseProperties reads a Java properties file as java.util.Properties.load does (FileConfigProvider reads
// it as UTF-8); the last of repeated keys wins.
func parseProperties(data []byte) (map[string]string, error) {
	props, err := ReadProperties(data)
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(props))
	for _, p := range props {
		out[p.Key] = p.Value
	}
	return out, nil
}

// Property is one entry of a properties file: its unescaped key and value, and the line (from 1) its logical
// line starts on.
type Property struct {
	Key, Value string
	Line       int
}

// ReadProperties reads a UTF-8 Java properties file as java.util.Properties.load does: # and ! comments, key
// and value separated by '=', ':' or white space, backslash line continuations, and the escapes \t \n \r \f
// \uXXXX; any other escaped character stands for itself. Entries come in file order, repeated keys included.
func ReadProperties(data []byte) ([]Property, error) {
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("not UTF-8")
	}
	var out []Property
	lines := strings.Split(strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\r", "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		line := strings.TrimLeft(lines[i], " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		start := i + 1
		// A logical line goes on while a physical one ends in an odd number of backslashes; the next line's
		// leading white space is dropped.
		for continues(line) && i+1 < len(lines) {
			i++
			line = line[:len(line)-1] + strings.TrimLeft(lines[i], " \t\f")
		}
		if continues(line) {
			line = line[:len(line)-1]
		}
		key, value, err := splitProperty(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		out = append(out, Property{Key: key, Value: value, Line: start})
	}
	return out, nil
}

func continues(line string) bool {
	n := 0
	for j := len(line) - 1; j >= 0 && line[j] == '\\'; j-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits a logical line at the first unescaped separator and unescapes both halves.
func splitProperty(line string) (key, value string, err error) {
	end := len(line)
	for j := 0; j < len(line); j++ {
		c := line[j]
		if c == '\\' {
			j++
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			end = j
			break
		}
	}
	rest := strings.TrimLeft(line[min(end, len(line)):], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	if key, err = unescape(line[:end]); err != nil {
		return "", "", err
	}
	if value, err = unescape(rest); err != nil {
		return "", "", err
	}
	return key, value, nil
}

func unescape(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return s, nil
	}
	var b strings.Builder
	for j := 0; j < len(s); j++ {
		c := s[j]
		if c != '\\' || j+1 == len(s) {
			b.WriteByte(c)
			continue
		}
		j++
		switch s[j] {
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'r':
			b.WriteByte('\r')
		case 'f':
			b.WriteByte('\f')
		case 'u':
			if j+5 > len(s) {
				return "", fmt.Errorf("malformed \\uxxxx encoding")
			}
			n, err := strconv.ParseUint(s[j+1:j+5], 16, 16)
			if err != nil {
				// Java's own wording.
				return "", fmt.Errorf("malformed \\uxxxx encoding")
			}
			b.WriteRune(rune(n))
			j += 4
		default:
			b.WriteByte(s[j])
		}
	}
	return b.String(), nil
}
