package configdef

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestValidatorMessages(t *testing.T) {
	tests := []struct {
		name      string
		validator Validator
		value     any
		want      string
	}{
		{"range low", AtLeast(1), int32(0), "Invalid value 0 for configuration k: Value must be at least 1"},
		{"range null", AtLeast(1), nil, "Invalid value null for configuration k: Value must be non-null"},
		{"range double bound", Between(0.5, 1.0), 2.0, "Invalid value 2.0 for configuration k: Value must be no more than 1.0"},
		{"range int bound on short", Between(0, 900), int16(1000), "Invalid value 1000 for configuration k: Value must be no more than 900"},
		{"range ok", Between(0.0, 0.25), 0.25, ""},
		{"valid string", In("source", "target"), "foo", "Invalid value foo for configuration k: String must be one of: source, target"},
		{"valid string null", In("none", "all"), nil, "Invalid value null for configuration k: String must be one of: none, all"},
		{"valid string is case sensitive", In("none", "all"), "ALL", "Invalid value ALL for configuration k: String must be one of: none, all"},
		{"case insensitive ok", InCaseInsensitive("requested", "required"), " Required", "Invalid value  Required for configuration k: String must be one of (case insensitive): REQUIRED, REQUESTED"},
		{"case insensitive accepts case", InCaseInsensitive("requested", "required"), "REQUIRED", ""},
		{"case insensitive hash order", InCaseInsensitive("poll", "interval", "connector"), "x", "Invalid value x for configuration k: String must be one of (case insensitive): INTERVAL, POLL, CONNECTOR"},
		{"security protocols in java order", InCaseInsensitive("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"), "foo", "Invalid value foo for configuration k: String must be one of (case insensitive): SASL_SSL, PLAINTEXT, SSL, SASL_PLAINTEXT"},
		{"assertion algorithms", InCaseInsensitive("ES256", "RS256"), "x", "Invalid value x for configuration k: String must be one of (case insensitive): ES256, RS256"},
		{"non-empty", NonEmptyString{}, "", "Invalid value  for configuration k: String must be non-empty"},
		{"non-empty null", NonEmptyString{}, nil, ""},
		{"name empty", NonEmptyStringWithoutControlChars{}, "", "Invalid value  for configuration k: String may not be empty"},
		{"name control chars", NonEmptyStringWithoutControlChars{}, "a\nb\u0085c", "Invalid value a\nb\u0085c for configuration k: String may not contain control sequences but had the following ASCII chars: 10, 133"},
		{"name null", NonEmptyStringWithoutControlChars{}, nil, ""},
		{"name unicode ok", NonEmptyStringWithoutControlChars{}, "ta/b&c=d þ ሴ", ""},
		{"non-null", NonNull{}, nil, "Invalid value null for configuration k: entry must be non null"},
		{"composite stops at first", All(NonNull{}, AtLeast(1)), nil, "Invalid value null for configuration k: entry must be non null"},
		{"func", ValidatorFunc("x", func(name string, v any) error { return NewConfigError(name, v, "Duplicate alias provided.") }), []string{"a", "a"}, "Invalid value [a, a] for configuration k: Duplicate alias provided."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.validator.Validate("k", tc.value)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, tc.want)
		})
	}
}

func TestValidatorStrings(t *testing.T) {
	require.Equal(t, "[1,...]", AtLeast(1).String())
	require.Equal(t, "[0.5,...,1.0]", Between(0.5, 1.0).String())
	require.Equal(t, "[none, restart]", In("none", "restart").String())
	require.Equal(t, "(case insensitive) [REQUIRED, REQUESTED]", InCaseInsensitive("requested", "required").String())
	require.Equal(t, "non-null string, [1,...]", All(NonNull{}, AtLeast(1)).String())
}

func TestJavaDouble(t *testing.T) {
	tests := map[float64]string{
		0.8: "0.8", 0.05: "0.05", 1: "1.0", 2: "2.0", 1e-4: "1.0E-4", 1e7: "1.0E7", 1e-3: "0.001",
		123456.789: "123456.789", 9999999: "9999999.0", -2.5: "-2.5", 1.5e300: "1.5E300",
	}
	for in, want := range tests {
		require.Equal(t, want, JavaDouble(in), "%v", in)
	}
}
