package tasks

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
)

// TestRestartShowsRestartingOnlyInPlans: Connect writes RESTARTING only for the units of a restart plan
// (includeTasks or onlyFailed); a plain connector restart or POST .../tasks/{n}/restart restarts the unit in
// place and leaves its status to the new run.
func TestRestartShowsRestartingOnlyInPlans(t *testing.T) {
	t.Parallel()
	conn := store.Unit{Connector: "c", Task: store.ConnectorUnit}
	task0 := store.Unit{Connector: "c", Task: 0}
	base := placement{
		workers: []string{"w1"},
		units:   []store.Unit{conn, task0},
		current: []store.Assignment{{Unit: conn, WorkerID: "w1"}, {Unit: task0, WorkerID: "w1"}},
		statuses: map[string][]store.Status{"c": {
			{Unit: conn, State: store.StateRunning}, {Unit: task0, State: store.StateFailed},
		}},
	}
	zero := 0
	for _, tc := range []struct {
		name    string
		restart store.RestartRequest
		want    map[store.Unit]bool // unit -> ShowRestarting
	}{
		{"task restart", store.RestartRequest{ID: 1, Connector: "c", Task: &zero}, map[store.Unit]bool{task0: false}},
		{"plain connector restart", store.RestartRequest{ID: 1, Connector: "c"}, map[store.Unit]bool{conn: false}},
		{"plan with tasks", store.RestartRequest{ID: 1, Connector: "c", IncludeTasks: true}, map[store.Unit]bool{conn: true, task0: true}},
		{"plan of failed units", store.RestartRequest{ID: 1, Connector: "c", IncludeTasks: true, OnlyFailed: true}, map[store.Unit]bool{task0: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := base
			p.restarts = []store.RestartRequest{tc.restart}
			changes, handled := p.plan()
			require.Equal(t, []int64{1}, handled)
			got := map[store.Unit]bool{}
			for _, c := range changes {
				require.True(t, c.Restarting, "%v restarts in place", c.Unit)
				require.Equal(t, "w1", c.WorkerID)
				got[c.Unit] = c.ShowRestarting
			}
			require.Equal(t, tc.want, got)
		})
	}
}
