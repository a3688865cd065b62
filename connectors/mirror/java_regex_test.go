package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJavaRegexTranslation(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		match   []string
		noMatch []string
	}{
		{`topic\d+`, []string{"topic1", "topic42"}, []string{"topic", "topicx"}},
		{`[a-z_]+`, []string{"abc_"}, []string{"ABC"}},
		{`[^.]+`, []string{"abc"}, []string{"a.b"}},
		{`[]a]`, []string{"]", "a"}, []string{"b"}},
		{`[a\-z]`, []string{"-", "a", "z"}, []string{"b"}},
		{`a{2,3}`, []string{"aa", "aaa"}, []string{"a", "aaaa"}},
		{`a{2,}b`, []string{"aab", "aaaab"}, []string{"ab"}},
		{`a*?b`, []string{"b", "aab"}, nil},
		{`(?i)abc`, []string{"ABC", "abc"}, nil},
		{`(?i:a)b`, []string{"Ab"}, []string{"AB"}},
		{`(?iu)é`, []string{"É"}, nil},
		{`(?-u)x`, []string{"x"}, nil},
		{`(?<name>a)b`, []string{"ab"}, nil},
		{`\Qa.b\E`, []string{"a.b"}, []string{"axb"}},
		{`\Qa.b`, []string{"a.b"}, []string{"axb"}},
		{`[\Q-\E]`, []string{"-"}, []string{`\`}},
		{`\Qab\E+`, []string{"abbb"}, []string{"abab"}},
		{`a\u0041`, []string{"aA"}, nil},
		{`\uD83D\uDE00`, []string{"😀"}, nil},
		{`\x41\x{42}`, []string{"AB"}, nil},
		{`\x{41}+`, []string{"AAA"}, nil},
		{`\0101\07`, []string{"A\a"}, nil},
		{`\e\cA`, []string{"\x1b\x01"}, nil},
		{`\s`, []string{" ", "\t", "\x0B"}, []string{"a"}},
		{`\S`, []string{"a"}, []string{"\x0B", " "}},
		{`[\s_]`, []string{"\x0B", "_"}, []string{"a"}},
		{`[\S]`, []string{"a"}, []string{"\x0B"}},
		{`\v`, []string{"\n", "\x0B", "\u2028"}, []string{"v", " "}},
		{`\V`, []string{"v"}, []string{"\n"}},
		{`\h`, []string{" ", "\u00a0", "\u3000"}, []string{"\n"}},
		{`[^\h]`, []string{"a"}, []string{" "}},
		{`\R`, []string{"\r\n", "\n", "\u0085"}, []string{"a"}},
		{`\p{Lower}+`, []string{"abc"}, []string{"aBc", "é"}},
		{`\P{Lower}`, []string{"A"}, []string{"a"}},
		{`[\p{Alpha}_]+`, []string{"ab_C"}, []string{"a1"}},
		{`[\P{Digit}]`, []string{"a"}, []string{"5"}},
		{`\p{Punct}`, []string{"!", "~", "["}, []string{"a"}},
		{`\pL+`, []string{"éa"}, []string{"1"}},
		{`\p{IsLatin}`, []string{"a"}, []string{"α"}},
		{`\p{Lu}`, []string{"A"}, []string{"a"}},
		{`\€`, []string{"€"}, nil},
		{`a.b|c`, []string{"axb", "c"}, []string{"axbc"}},
		{`a}`, []string{"a}"}, nil},
	} {
		re, err := compileJavaRegex(tc.pattern)
		require.NoError(t, err, tc.pattern)
		for _, s := range tc.match {
			require.True(t, re.MatchString(s), "%s should match %q", tc.pattern, s)
		}
		for _, s := range tc.noMatch {
			require.False(t, re.MatchString(s), "%s should not match %q", tc.pattern, s)
		}
	}
}

func TestJavaRegexRejections(t *testing.T) {
	for _, tc := range []struct {
		pattern, reason string
	}{
		{`(?=a)a`, "look-ahead"},
		{`(?!tmp).*`, "look-ahead"},
		{`.*(?<=x)`, "look-behind"},
		{`.*(?<!x)`, "look-behind"},
		{`(a)\1`, "back-reference"},
		{`(?<n>a)\k<n>`, "named back-reference"},
		{`a*+`, "possessive"},
		{`a++`, "possessive"},
		{`a?+`, "possessive"},
		{`a{2}+`, "possessive"},
		{`(?>a)`, "atomic"},
		{`[a-z&&[^b]]`, "intersection"},
		{`[a[bc]]`, "nested character class"},
		{`[[:alpha:]]`, "nested character class"},
		{`(?x)a b`, "COMMENTS"},
		{`(?U)\w`, "UNICODE_CHARACTER_CLASS"},
		{`(?d)a`, "UNIX_LINES"},
		{`a\Z`, `\Z`},
		{`\Ga`, `\G`},
		{`\X`, "grapheme"},
		{`a{`, "repetition"},
		{`a{,3}`, "repetition"},
		{`{1}`, "RE2 rejects it"},
		{`\p{javaLowerCase}`, "java.lang.Character"},
		{`\p{InGreek}`, "block"},
		{`\p{Nonsense}`, "RE2 rejects it"},
		{`(a`, "missing ')'"},
		{`a)`, "unmatched ')'"},
		{`[a`, "unclosed character class"},
		{`a\`, "trailing backslash"},
		{`(?P<n>a)`, "not Java syntax"},
		{`\0`, "octal"},
		{`\u12`, "unicode escape"},
		{`\é`, "unsupported escape"},
		{`a{1001}`, "RE2 rejects it"},
	} {
		_, err := compileJavaRegex(tc.pattern)
		require.Error(t, err, tc.pattern)
		require.Contains(t, err.Error(), tc.reason, tc.pattern)
	}
}
