package metrics

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnitNotices(t *testing.T) {
	t.Parallel()
	r := New()
	r.UnitState("src", 0, "RUNNING")
	r.UnitNotices("src", 0, []string{"data_not_replicated", "data_not_replicated", "target_unreachable"})
	r.UnitNotices("src", 1, []string{"source_unreachable"})
	all := gather(t, r)
	require.Equal(t, 2.0, mustValue(t, all, "kmirror_unit_notices", map[string]string{"connector": "src", "task": "0", "kind": "data_not_replicated"}))
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_unit_notices", map[string]string{"connector": "src", "task": "0", "kind": "target_unreachable"}))
	require.Len(t, all["kmirror_unit_notices"], 3)

	r.UnitNotices("src", 0, []string{"target_unreachable"})
	all = gather(t, r)
	_, ok := value(t, all, "kmirror_unit_notices", map[string]string{"task": "0", "kind": "data_not_replicated"})
	require.False(t, ok, "a notice no longer shown leaves no series")
	require.Len(t, all["kmirror_unit_notices"], 2)

	r.UnitNotices("src", 0, nil)
	r.UnitGone("src", 1)
	require.Empty(t, gather(t, r)["kmirror_unit_notices"], "cleared, and gone with its unit")
}
