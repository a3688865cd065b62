package metrics

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestDatabaseUp(t *testing.T) {
	t.Parallel()
	r := New()
	require.Empty(t, gather(t, r)["kmirror_database_up"], "absent until the first heartbeat")
	r.Database(true)
	require.Equal(t, 1.0, mustValue(t, gather(t, r), "kmirror_database_up", nil))
	r.Database(false)
	require.Equal(t, 0.0, mustValue(t, gather(t, r), "kmirror_database_up", nil))
}

func TestCheckpointRound(t *testing.T) {
	t.Parallel()
	r := New()
	at := time.Unix(1_700_000_000, 500_000_000)
	r.CheckpointRound("cp", 0, 60*time.Second, at)
	r.CheckpointRound("cp", 1, 5*time.Second, at.Add(time.Second))
	all := gather(t, r)
	task0 := map[string]string{"connector": "cp", "task": "0"}
	require.Equal(t, 1_700_000_000.5, mustValue(t, all, "kmirror_checkpoint_round_timestamp_seconds", task0))
	require.Equal(t, 60.0, mustValue(t, all, "kmirror_checkpoint_interval_seconds", task0))
	require.Equal(t, 5.0, mustValue(t, all, "kmirror_checkpoint_interval_seconds", map[string]string{"connector": "cp", "task": "1"}))

	r.RemoveCheckpointTask("cp", 0)
	all = gather(t, r)
	require.Len(t, all["kmirror_checkpoint_round_timestamp_seconds"], 1, "task 1's series stay")
	require.Len(t, all["kmirror_checkpoint_interval_seconds"], 1)
}

func TestVerdictGauges(t *testing.T) {
	t.Parallel()
	r := New()
	calls := 0
	var fail error
	r.SetVerdictSource(func(ctx context.Context) ([]Verdict, error) {
		calls++
		_, ok := ctx.Deadline()
		require.True(t, ok, "a scrape bounds the store reads")
		return []Verdict{
			{Connector: "ab", Kind: "tasks_max_bound", Severity: "warning", Tasks: []int{0, 2}},
			{Connector: "ab", Kind: "unusable_task_slots", Severity: "info"},
			{Connector: "cd", Kind: "caught_up", Severity: "ok"},
		}, fail
	})
	require.Empty(t, gather(t, r)["kmirror_connector_verdict"], "only the leader exports verdicts")
	require.Zero(t, calls, "and only the leader reads them")

	r.Leader(true)
	all := gather(t, r)
	require.Len(t, all["kmirror_connector_verdict"], 3)
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_connector_verdict", map[string]string{"connector": "ab", "verdict": "tasks_max_bound", "severity": "warning"}))
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_connector_verdict", map[string]string{"connector": "cd", "verdict": "caught_up", "severity": "ok"}))
	require.Len(t, all["kmirror_task_verdict"], 2)
	require.Equal(t, 1.0, mustValue(t, all, "kmirror_task_verdict", map[string]string{"connector": "ab", "task": "2", "verdict": "tasks_max_bound", "severity": "warning"}))

	fail = errors.New("database unreachable")
	rec := httptest.NewRecorder()
	r.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	require.Equal(t, http.StatusOK, rec.Code, "a failing source does not blank the page")
	require.NotContains(t, rec.Body.String(), "kmirror_connector_verdict{")
	require.NotContains(t, rec.Body.String(), "database unreachable")
	require.Contains(t, rec.Body.String(), "kmirror_worker_leader 1")
}
