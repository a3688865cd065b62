package source

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/tasks"
)

// leasedEnv is a running task's env whose lease is valid while valid is set.
type leasedEnv struct {
	*pausedTestEnv
	valid      bool
	publishErr error
}

func (e *leasedEnv) Lease() tasks.Lease { return leasedLease{e} }

func (e *leasedEnv) PublishPartitionStats(ctx context.Context, stats []kmtype.PartitionStat) error {
	if e.publishErr != nil {
		return e.publishErr
	}
	return e.pausedTestEnv.PublishPartitionStats(ctx, stats)
}

func (e *leasedEnv) PublishPipelineStat(context.Context, kmtype.PipelineStat) error { return nil }

type leasedLease struct{ e *leasedEnv }

func (l leasedLease) Valid() bool              { return l.e.valid }
func (l leasedLease) ValidFor() time.Duration  { return time.Second }
func (l leasedLease) Revoked() <-chan struct{} { return l.e.revoked }
func (l leasedLease) Settle() time.Duration    { return time.Second }

func leasedRun(t *testing.T, parts ...*sourcePartition) (*sourceRun, *leasedEnv) {
	log := slog.New(slog.DiscardHandler)
	env := &leasedEnv{pausedTestEnv: &pausedTestEnv{t: t, log: log, revoked: make(chan struct{}), stop: context.Background()}, valid: true}
	return &sourceRun{env: env, log: log, sourceAlias: "A", targetAlias: "B", resetPolicy: "earliest", parts: parts,
		limit: lograte.New(time.Minute)}, env
}

// A run's end leaves its partitions' last positions behind marked stop, but only while it holds a valid lease:
// a run that lost its task writes nothing over what its successor publishes.
func TestFinalStatsOnlyUnderAValidLease(t *testing.T) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 41, "id-1")
	r, env := leasedRun(t, p)
	r.sampleStats(nil, time.Now())

	env.valid = false
	r.publishFinalStats()
	require.Empty(t, env.published, "no valid lease: nothing written")

	env.valid = true
	r.publishFinalStats()
	got, _ := env.latest()
	require.Equal(t, statusStop, got[0].Status)
	require.Equal(t, int64(42), got[0].ReplicatedOffset)
}

// The committer's stats tick publishes every other sample; a failed publication is retried at the next, and a
// fenced one ends the run.
func TestStatsTickRetriesAllButFencing(t *testing.T) {
	ctx := context.Background()
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 41, "id-1")
	r, env := leasedRun(t, p)
	reader := &logReader{logs: map[mirror.TopicPartition][2]int64{{Topic: "t"}: {0, 50}}, seeks: map[mirror.TopicPartition]int64{}}

	require.NoError(t, r.statsTick(ctx, reader, time.Now(), false))
	require.Empty(t, env.published, "a sample alone publishes nothing")
	require.NoError(t, r.statsTick(ctx, reader, time.Now(), true))
	got, _ := env.latest()
	require.Equal(t, int64(50), *got[0].EndOffset)
	require.Equal(t, int64(8), *got[0].LagRecords)

	env.publishErr = errors.New("database down")
	require.NoError(t, r.statsTick(ctx, reader, time.Now(), true))
	env.publishErr = kmtype.ErrFenced
	require.ErrorIs(t, r.statsTick(ctx, reader, time.Now(), true), kmtype.ErrFenced)
}
