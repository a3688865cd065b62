package clientconfig

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The expected values and error texts below were checked against Kafka 4.1.1's
// JaasContext.loadClientContext on OpenJDK 17.
func TestParseJAAS(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		module string
		flag   string
		opts   map[string]string
	}{
		{name: "plain",
			in:     `org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="s3cr3t";`,
			module: plainLoginModule, flag: "required", opts: map[string]string{"username": "alice", "password": "s3cr3t"}},
		{name: "flag in any case, single quotes, escapes",
			in:     `x.M Optional a='it\'s' b="tab\there" c="oct\101z" d="back\\slash\"q" e='a"b';`,
			module: "x.M", flag: "optional",
			opts: map[string]string{"a": "it's", "b": "tab\there", "c": "octAz", "d": `back\slash"q`, "e": `a"b`}},
		{name: "comments and newlines",
			in:     "x.M required /* c */ a=\"1\" // rest of line\n b=\"2\";",
			module: "x.M", flag: "required", opts: map[string]string{"a": "1", "b": "2"}},
		{name: "unquoted words with - _ $ and non-ASCII",
			in:     `x.M required a=$v_1-2 "k"="v" é=ü;`,
			module: "x.M", flag: "required", opts: map[string]string{"a": "$v_1-2", "k": "v", "é": "ü"}},
		{name: "an unterminated quote ends at the line end",
			in:     "x.M required a=\"open\nb=c;",
			module: "x.M", flag: "required", opts: map[string]string{"a": "open", "b": "c"}},
		{name: "no options", in: "x.M requisite;", module: "x.M", flag: "requisite", opts: map[string]string{}},
		{name: "quoted module name", in: `"q.M" required;`, module: "q.M", flag: "required", opts: map[string]string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			entries, err := parseJAAS(tc.in)
			require.NoError(t, err)
			require.Len(t, entries, 1)
			require.Equal(t, tc.module, entries[0].module)
			require.Equal(t, tc.flag, entries[0].flag)
			require.Equal(t, tc.opts, entries[0].options)
		})
	}

	entries, err := parseJAAS(`a.A required; b.B sufficient x="y";`)
	require.NoError(t, err)
	require.Len(t, entries, 2)
}

func TestParseJAASErrors(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "  // nothing\n", "Login module not specified in JAAS config"},
		{"no flag", "x.M", "Login module control flag not specified in JAAS config"},
		{"flag not a word", "x.M 42;", "Login module control flag is not available in the JAAS config"},
		{"bad flag", "x.M mandatory;", "Invalid login module control flag 'mandatory' in JAAS config"},
		{"no semicolon", `x.M required a="b"`, "JAAS config entry not terminated by semi-colon"},
		{"missing value", `x.M required a=;`, "Value not specified for key 'a' in JAAS config"},
		{"missing equals", `x.M required a "b";`, "Value not specified for key 'a' in JAAS config"},
		{"unquoted number", `x.M required password=123abc;`, "Value not specified for key 'password' in JAAS config"},
		{"unquoted URL is cut by the comment", `x.M required url=http://host/p;`, "Value not specified for key 'null' in JAAS config"},
		{"unquoted path starts a comment", "x.M required path=/etc/k;", "Value not specified for key 'path' in JAAS config"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseJAAS(tc.in)
			require.EqualError(t, err, tc.want)
		})
	}
}
