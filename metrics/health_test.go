package metrics

import (
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
