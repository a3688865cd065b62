package configdef

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseTypeFollowsJava(t *testing.T) {
	d := New()
	tests := []struct {
		name    string
		typ     Type
		raw     string
		want    any
		wantErr string
	}{
		{"string is trimmed", TypeString, "  x y \t", "x y", ""},
		{"int", TypeInt, " 42 ", int32(42), ""},
		{"int with plus", TypeInt, "+7", int32(7), ""},
		{"int not a number", TypeInt, "abc", nil, "Invalid value abc for configuration k: Not a number of type INT"},
		{"int keeps raw value in message", TypeInt, " 1.5 ", nil, "Invalid value  1.5  for configuration k: Not a number of type INT"},
		{"int overflow", TypeInt, "99999999999", nil, "Invalid value 99999999999 for configuration k: Not a number of type INT"},
		{"int underscore", TypeInt, "1_000", nil, "Invalid value 1_000 for configuration k: Not a number of type INT"},
		{"short overflow", TypeShort, "40000", nil, "Invalid value 40000 for configuration k: Not a number of type SHORT"},
		{"long", TypeLong, "-60000", int64(-60000), ""},
		{"long fraction", TypeLong, "1.5", nil, "Invalid value 1.5 for configuration k: Not a number of type LONG"},
		{"double", TypeDouble, "0.8", 0.8, ""},
		{"double exponent and suffix", TypeDouble, "1e-4d", 1e-4, ""},
		{"double infinity", TypeDouble, "-Infinity", math.Inf(-1), ""},
		{"double go-only spelling", TypeDouble, "inf", nil, "Invalid value inf for configuration k: Not a number of type DOUBLE"},
		{"boolean any case", TypeBoolean, " TRUE ", true, ""},
		{"boolean invalid", TypeBoolean, "yes", nil, "Invalid value yes for configuration k: Expected value to be either true or false"},
		{"list", TypeList, " a , b ,, c ", []string{"a", "b", "", "c"}, ""},
		{"list keeps trailing empty element", TypeList, "a,", []string{"a", ""}, ""},
		{"empty list", TypeList, "   ", []string{}, ""},
		{"password", TypePassword, " s3cret ", Password("s3cret"), ""},
		{"class", TypeClass, " org.example.Foo$Bar ", ClassName("org.example.Foo$Bar"), ""},
		{"class not found", TypeClass, "no such", nil, "Invalid value no such for configuration k: Class no such could not be found."},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := d.parseType("k", tc.raw, tc.typ)
			if tc.wantErr != "" {
				require.EqualError(t, err, tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestClassResolver(t *testing.T) {
	d := New().WithClassResolver(func(name string) (string, bool) {
		if name == "ByteArray" || name == "org.apache.kafka.connect.converters.ByteArrayConverter" {
			return "org.apache.kafka.connect.converters.ByteArrayConverter", true
		}
		return "", false
	})
	got, err := d.parseType("key.converter", "ByteArray", TypeClass)
	require.NoError(t, err)
	require.Equal(t, ClassName("org.apache.kafka.connect.converters.ByteArrayConverter"), got)
	_, err = d.parseType("key.converter", "org.example.Json", TypeClass)
	require.EqualError(t, err, "Invalid value org.example.Json for configuration key.converter: Class org.example.Json could not be found.")
}

func TestParseProducesTypedValues(t *testing.T) {
	d := New().
		Define(Key{Name: "name", Type: TypeString, Validator: NonEmptyStringWithoutControlChars{}}).
		Define(Key{Name: "tasks.max", Type: TypeInt, Default: 1, HasDefault: true, Validator: AtLeast(1)}).
		Define(Key{Name: "lag", Type: TypeLong, Default: 100, HasDefault: true}).
		Define(Key{Name: "rf", Type: TypeShort, Default: 3, HasDefault: true}).
		Define(Key{Name: "factor", Type: TypeDouble, Default: 0.8, HasDefault: true}).
		Define(Key{Name: "enabled", Type: TypeBoolean, Default: true, HasDefault: true}).
		Define(Key{Name: "topics", Type: TypeList, Default: ".*", HasDefault: true}).
		Define(Key{Name: "secret", Type: TypePassword, HasDefault: true}).
		Define(Key{Name: "policy", Type: TypeClass, Default: "org.example.Policy", HasDefault: true})

	v, err := d.Parse(map[string]string{"name": " mm2 ", "tasks.max": "4", "secret": "pw", "extra": "kept"})
	require.NoError(t, err)
	require.Equal(t, "mm2", v.String("name"))
	require.Equal(t, 4, v.Int("tasks.max"))
	require.Equal(t, int64(100), v.Long("lag"))
	require.Equal(t, int16(3), v.Short("rf"))
	require.Equal(t, 0.8, v.Double("factor"))
	require.True(t, v.Bool("enabled"))
	require.Equal(t, []string{".*"}, v.List("topics"))
	require.Equal(t, "pw", v.Password("secret").Value())
	require.Equal(t, "[hidden]", v.Password("secret").String())
	require.Equal(t, "org.example.Policy", v.Class("policy"))
	require.Equal(t, "kept", v.Originals()["extra"])
	require.False(t, v.IsNull("name"))
	require.PanicsWithValue(t, "configdef: Unknown configuration 'nope'", func() { v.String("nope") })
	require.Panics(t, func() { v.Int("name") })

	_, err = d.Parse(map[string]string{"tasks.max": "4"})
	require.EqualError(t, err, `Missing required configuration "name" which has no default value.`)
	_, err = d.Parse(map[string]string{"name": "x", "tasks.max": "0"})
	require.EqualError(t, err, "Invalid value 0 for configuration tasks.max: Value must be at least 1")
	var cfgErr *ConfigError
	require.ErrorAs(t, err, &cfgErr)
}

func TestParseRejectsUndefinedDependents(t *testing.T) {
	d := New().Define(Key{Name: "a", Type: TypeString, HasDefault: true, Dependents: []string{"b"}})
	_, err := d.Parse(map[string]string{})
	require.EqualError(t, err, "Some configurations in are referred in the dependents, but not defined: b")
}
