package configdef

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func ptr(s string) *string { return &s }

func connectorDef() *Def {
	return New().
		Define(Key{Name: "name", Type: TypeString, Validator: NonEmptyStringWithoutControlChars{}, Importance: ImportanceHigh,
			Documentation: "Globally unique name to use for this connector.", Group: "Common", OrderInGroup: 1, Width: WidthMedium, DisplayName: "Connector name"}).
		Define(Key{Name: "tasks.max", Type: TypeInt, Default: 1, HasDefault: true, Validator: AtLeast(1), Importance: ImportanceHigh,
			Documentation: "Maximum number of tasks to use for this connector.", Group: "Common", OrderInGroup: 3, Width: WidthShort, DisplayName: "Tasks max"}).
		Define(Key{Name: "topics", Type: TypeList, Default: ".*", HasDefault: true, Importance: ImportanceHigh}).
		Define(Key{Name: "secret", Type: TypePassword, HasDefault: true, Importance: ImportanceHigh})
}

func byName(values []ConfigValue) map[string]ConfigValue {
	out := map[string]ConfigValue{}
	for _, v := range values {
		out[v.Name] = v
	}
	return out
}

func TestValidateMessages(t *testing.T) {
	tests := []struct {
		name   string
		props  map[string]*string
		key    string
		value  *string
		errors []string
	}{
		{"tasks.max=0", map[string]*string{"tasks.max": ptr("0")}, "tasks.max", ptr("0"),
			[]string{"Invalid value 0 for configuration tasks.max: Value must be at least 1"}},
		{"tasks.max=abc keeps validating with null", map[string]*string{"tasks.max": ptr("abc")}, "tasks.max", nil,
			[]string{"Invalid value abc for configuration tasks.max: Not a number of type INT",
				"Invalid value null for configuration tasks.max: Value must be non-null"}},
		{"tasks.max padded", map[string]*string{"tasks.max": ptr("  3 ")}, "tasks.max", ptr("3"), []string{}},
		{"tasks.max null", map[string]*string{"tasks.max": nil}, "tasks.max", nil,
			[]string{"Invalid value null for configuration tasks.max: Value must be non-null"}},
		{"name empty", map[string]*string{"name": ptr("")}, "name", ptr(""),
			[]string{"Invalid value  for configuration name: String may not be empty"}},
		{"name with control chars", map[string]*string{"name": ptr("a\nb")}, "name", ptr("a\nb"),
			[]string{"Invalid value a\nb for configuration name: String may not contain control sequences but had the following ASCII chars: 10"}},
		{"name missing", map[string]*string{}, "name", nil,
			[]string{`Missing required configuration "name" which has no default value.`}},
		{"list rendered joined", map[string]*string{"topics": ptr(" a , b ,, c ")}, "topics", ptr("a,b,,c"), []string{}},
		{"default list", map[string]*string{}, "topics", ptr(".*"), []string{}},
		{"password hidden", map[string]*string{"secret": ptr("pw")}, "secret", ptr("[hidden]"), []string{}},
		{"null default", map[string]*string{}, "secret", nil, []string{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := byName(connectorDef().Validate(tc.props))[tc.key]
			require.Equal(t, tc.value, got.Value)
			require.Equal(t, tc.errors, got.Errors)
			require.True(t, got.Visible)
			require.Equal(t, []string{}, got.RecommendedValues)
		})
	}
}

func TestValidateKeepsDefinitionOrder(t *testing.T) {
	values := connectorDef().Validate(map[string]*string{"zzz": ptr("ignored"), "name": ptr("n")})
	names := make([]string, len(values))
	for i, v := range values {
		names[i] = v.Name
	}
	require.Equal(t, []string{"name", "tasks.max", "topics", "secret"}, names)
}

type visibleWhenSet struct{ other string }

func (r visibleWhenSet) ValidValues(string, map[string]any) []string { return []string{} }
func (r visibleWhenSet) Visible(_ string, parsed map[string]any) bool {
	return parsed[r.other] != nil
}

func TestValidateRunsRecommendersAndReportsUndefinedDependents(t *testing.T) {
	d := New().
		Define(Key{Name: "version", Type: TypeString, HasDefault: true, Recommender: visibleWhenSet{other: "conv"}}).
		Define(Key{Name: "conv", Type: TypeString, HasDefault: true, Dependents: []string{"ghost"}})
	values := d.Validate(map[string]*string{})
	require.Len(t, values, 3)
	require.False(t, values[0].Visible)
	require.Equal(t, ConfigValue{Name: "ghost", RecommendedValues: []string{},
		Errors: []string{"ghost is referred in the dependents, but not defined."}}, values[2])

	values = d.Validate(map[string]*string{"conv": ptr("x")})
	require.True(t, values[0].Visible)
}
