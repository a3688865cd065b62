package configdef

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefineNormalisesShortDefinitions(t *testing.T) {
	d := New().Define(Key{Name: "topics", Type: TypeList, Default: "a, b ,c", HasDefault: true, Importance: ImportanceHigh})
	k, ok := d.Lookup("topics")
	require.True(t, ok)
	require.Equal(t, []string{"a", "b", "c"}, k.Default)
	require.Equal(t, WidthNone, k.Width)
	require.Equal(t, "topics", k.DisplayName)
	require.Equal(t, -1, k.OrderInGroup)
	require.Equal(t, []string{}, k.Dependents)
	require.True(t, d.Has("topics"))
	require.False(t, d.Has("nope"))
}

func TestDefineKeepsGroupOrder(t *testing.T) {
	d := New().
		Define(Key{Name: "a", Type: TypeString, Group: "Common", OrderInGroup: 1}).
		Define(Key{Name: "b", Type: TypeString, Group: "Errors", OrderInGroup: 1}).
		Define(Key{Name: "c", Type: TypeString, Group: "Common", OrderInGroup: 2}).
		Define(Key{Name: "d", Type: TypeString})
	require.Equal(t, []string{"Common", "Errors"}, d.Groups())
	require.Equal(t, []string{"a", "b", "c", "d"}, d.Names())
}

func TestDefinePanicsOnProgrammingErrors(t *testing.T) {
	require.PanicsWithValue(t, "configdef: Configuration a is defined twice.", func() {
		New().Define(Key{Name: "a", Type: TypeString}).Define(Key{Name: "a", Type: TypeInt})
	})
	require.Panics(t, func() {
		New().Define(Key{Name: "n", Type: TypeInt, Default: 0, HasDefault: true, Validator: AtLeast(1)})
	})
}

func TestReplaceKeepsPosition(t *testing.T) {
	d := New().
		Define(Key{Name: "a", Type: TypeString, Documentation: "old"}).
		Define(Key{Name: "b", Type: TypeString})
	d.Replace(Key{Name: "a", Type: TypeString, Documentation: "new"}).Replace(Key{Name: "c", Type: TypeInt})
	require.Equal(t, []string{"a", "b", "c"}, d.Names())
	k, _ := d.Lookup("a")
	require.Equal(t, "new", k.Documentation)
}

func TestCloneIsIndependent(t *testing.T) {
	base := New().Define(Key{Name: "a", Type: TypeString})
	c := base.Clone().Define(Key{Name: "b", Type: TypeString})
	require.Equal(t, []string{"a"}, base.Names())
	require.Equal(t, []string{"a", "b"}, c.Names())
}
