package mirror

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// The topic and group filters (topics, topics.exclude, groups, ...) are Java regexes from a REST body, so the
// translation to RE2 sees whatever a client sends. The seeds are the patterns of java_regex_test.go's tables
// and MM2's default filters.
var javaRegexSeeds = []string{
	`topic\d+`, `[a-z_]+`, `[^.]+`, `[]a]`, `[a\-z]`, `a{2,3}`, `a{2,}?`, `.*`, `.*[\-\.]internal`, `.*\.replica`,
	`__.*`, `console-consumer-.*`, `connect-.*`, `__consumer_offsets`, `(?i)orders`, `(?i:a)b`, `(?<name>x)`,
	`\Qa.b\E`, `\Qunterminated`, `\u0041\uD83D\uDE00`, `\0101`, `\x41\x{1F600}`, `\cA`, `\e`, `\R`, `\h\H\s\S\v\V`,
	`[\s\S]`, `\p{Alpha}\P{Digit}`, `[\p{Lower}\P{Upper}]`, `\pL\p{IsLatin}\p{sc=Greek}\p{gc=Lu}`, `\p{InGreek}`,
	`\p{javaLowerCase}`, `a++`, `(?=a)`, `(?<=a)`, `(?>a)`, `\1`, `\k<n>`, `[a&&b]`, `[a[b]]`, `(?x)a`, `(?U)a`,
	`(?d)a`, `a{`, `a{1`, `a{,2}`, `\`, `(`, `)`, `(?`, `[`, `[^`, `\p`, `\p{`, `\Z`, `\G`, `\X`, `\N{x}`, `\b{g}`,
	`\é`, `\-`, "\x00", "\xff\xfe", `(?-i)a`, `(?i-)a`, `(?)`, `(?u:a)`, `\u12`, `\0`, `\08`, `\c`,
}

// FuzzJavaRegex: translating any pattern either fails with a message or yields a self-contained RE2 pattern.
// Self-contained matters because compileJavaRegex wraps the translation in \A(?:...)\z: a translation that
// closed the wrapper's group early (say "a)|(b") would compile there and match far more than whole strings.
func FuzzJavaRegex(f *testing.F) {
	for _, s := range javaRegexSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, pattern string) {
		translated, err := translateJavaRegex(pattern)
		if err != nil {
			if err.Error() == "" {
				t.Fatalf("translate %q: empty error", pattern)
			}
			if _, cerr := compileJavaRegex(pattern); cerr == nil {
				t.Fatalf("translate %q failed (%v) but compileJavaRegex accepted it", pattern, err)
			}
			return
		}
		if !utf8.ValidString(translated) {
			t.Fatalf("translate %q: %q is not valid UTF-8", pattern, translated)
		}
		_, aloneErr := regexp.Compile(translated)
		re, wrappedErr := compileJavaRegex(pattern)
		if (aloneErr == nil) != (wrappedErr == nil) {
			t.Fatalf("translate %q = %q: compiles alone: %v, wrapped: %v; the translation is not self-contained",
				pattern, translated, aloneErr, wrappedErr)
		}
		if wrappedErr != nil {
			if !strings.HasPrefix(wrappedErr.Error(), "RE2 rejects it") {
				t.Fatalf("compile %q: error %q does not say why", pattern, wrappedErr)
			}
			return
		}
		// Whole-string matching: what matches must be the whole input.
		for _, s := range []string{"", pattern, translated, "orders", "a"} {
			if loc := re.FindStringIndex(s); loc != nil && (loc[0] != 0 || loc[1] != len(s)) {
				t.Fatalf("pattern %q matched %q only at %v", pattern, s, loc)
			}
		}
	})
}

// javaMeta are the characters with a meaning outside a class in java.util.regex (without (?x)).
const javaMeta = `\^$.|?*+()[]{}`

// FuzzJavaRegexLiteral: a pattern with no metacharacter is a literal and matches exactly itself; so do its two
// quoted spellings, \Q...\E and a backslash before every ASCII punctuation character (Java's Pattern.quote and
// what hand-written configs do).
func FuzzJavaRegexLiteral(f *testing.F) {
	for _, s := range []string{"orders", "A.orders", "mm2-offsets.A.internal", "__consumer_offsets", "a b\tc",
		"ünïcödé-😀", "\x00", "\xff", "x]y}z", "#-_/:;<>=!@%&'\",~`", `\E`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// A Java String holds UTF-16, read from the config's UTF-8 with U+FFFD for invalid bytes; so does the
		// translator. The REST API refuses invalid UTF-8 before it gets here.
		s = strings.ToValidUTF8(s, "\uFFFD")
		spellings := map[string]string{}
		if !strings.ContainsAny(s, javaMeta) {
			spellings["plain"] = s
		}
		if !strings.Contains(s, `\E`) {
			spellings[`\Q...\E`] = `\Q` + s + `\E`
		}
		var escaped strings.Builder
		for _, r := range s {
			if r < utf8.RuneSelf && !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				escaped.WriteByte('\\')
			}
			escaped.WriteRune(r)
		}
		spellings["escaped"] = escaped.String()
		for how, pattern := range spellings {
			re, err := compileJavaRegex(pattern)
			if err != nil {
				t.Fatalf("%s literal %q (%q): %v", how, s, pattern, err)
			}
			if !re.MatchString(s) {
				t.Fatalf("%s literal %q (%q, RE2 %s) does not match itself", how, s, pattern, re)
			}
			_, last := utf8.DecodeLastRuneInString(s)
			if re.MatchString(s+"x") || (s != "" && re.MatchString(s[:len(s)-last])) {
				t.Fatalf("%s literal %q (%q, RE2 %s) matches more than itself", how, s, pattern, re)
			}
		}
	})
}
