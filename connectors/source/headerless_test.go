package source

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/tasks"
)

// oppositeDouble serves the opposite flow's ranges a test sets, and counts the lookups.
type oppositeDouble struct {
	tasks.TaskEnv
	mu      sync.Mutex
	ranges  []kmtype.TargetRange
	queries [][]kmtype.RangeQuery
}

func (e *oppositeDouble) OppositeRanges(_ context.Context, qs []kmtype.RangeQuery) ([]kmtype.TargetRange, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.queries = append(e.queries, qs)
	var out []kmtype.TargetRange
	for _, q := range qs {
		for _, r := range e.ranges {
			if r.Topic == q.Topic && r.Partition == q.Partition && r.End >= q.Offset {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

func (e *oppositeDouble) set(rs ...kmtype.TargetRange) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.ranges = rs
}

// highReader is a source reader whose partitions' high watermark is high.
type highReader struct {
	sourceReader
	high int64
}

func (h highReader) CachedWatermarks(string, int32) (int64, int64, error) { return 0, h.high, nil }

// TestCovered: an offset is covered when it lies in one of the ascending spans, ends included.
func TestCovered(t *testing.T) {
	spans := []kmtype.TargetRange{{Start: 3, End: 7}, {Start: 20, End: 21}, {Start: 30, End: 30}}
	for off, want := range map[int64]bool{0: false, 2: false, 3: true, 5: true, 7: true, 8: false, 19: false, 20: true, 21: true, 22: false, 30: true, 31: false} {
		require.Equal(t, want, covered(spans, off), "offset %d", off)
	}
	require.False(t, covered(nil, 0))
}

// TestHeaderlessSkip: a partition no opposite flow writes into decides at once (copy). Once the opposite flow's
// ranges appear, a record past what the loaded map settles waits until a map loaded headerlessHold later
// settles it, and that map decides: the opposite flow's copy is skipped, a record it did not write is copied;
// records the waited-for map settles decide at once. While the opposite flow stamps its copies, headerless
// records are not held.
func TestHeaderlessSkip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newSourcePartition(mirror.TopicPartition{Topic: "orders", Partition: 0}, "orders", -1, "")
	env := &oppositeDouble{}
	r := &sourceRun{env: env, log: slog.New(slog.DiscardHandler), limit: lograte.New(time.Minute), sourceAlias: "B", targetAlias: "A",
		parts: []*sourcePartition{p}, bySource: map[string][]*sourcePartition{"orders": {p}}}
	require.NoError(t, r.loadOpposite(ctx, nil))
	require.False(t, r.rule.needed)
	reader := highReader{high: 15}

	began := time.Now()
	skip, stop := r.headerlessSkip(ctx, reader, p, 10, false)
	require.False(t, skip || stop, "nobody else writes into the partition: copied")
	require.Less(t, time.Since(began), headerlessHold, "without waiting")

	env.set(kmtype.TargetRange{Topic: "orders", Partition: 0, Start: 11, End: 12})
	r.rule.loaded = time.Time{} // the next record looks for opposite flows again
	began = time.Now()
	skip, stop = r.headerlessSkip(ctx, reader, p, 11, false)
	require.False(t, stop)
	require.True(t, skip, "the opposite flow's copy is skipped")
	require.True(t, r.rule.needed, "the run needs the Go engine from now on")
	require.GreaterOrEqual(t, time.Since(began), headerlessHold, "decided by a map loaded a hold after the record existed")

	began = time.Now()
	for off, want := range map[int64]bool{12: true, 13: false, 14: false} {
		skip, stop = r.headerlessSkip(ctx, reader, p, off, false)
		require.False(t, stop)
		require.Equal(t, want, skip, "offset %d", off)
	}
	require.Less(t, time.Since(began), headerlessHold, "records below the settled high watermark decide at once")

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	_, stop = r.headerlessSkip(cancelled, reader, p, 15, false)
	require.True(t, stop, "a record past the settled map waits; the pipeline's end stops the wait")

	// The opposite flow is seen to stamp its copies: a headerless record past the map is a producer's, decided
	// at once; one that came back into its origin cluster still waits.
	r.oppositeStamps(p)
	skip, stop = r.headerlessSkip(cancelled, reader, p, 16, false)
	require.False(t, skip || stop, "copied without waiting")
	_, stop = r.headerlessSkip(cancelled, reader, p, 16, true)
	require.True(t, stop, "a record that came back waits for the map")
}

// TestHeaderlessRuleLeavesTheCPath: a C pipeline whose look finds an opposite flow writing into its partitions
// ends with a pipeline restart, and the run's next pipelines take the Go engine, even with --data-path=c; a
// connector with provenance off looks for nothing.
func TestHeaderlessRuleLeavesTheCPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newSourcePartition(mirror.TopicPartition{Topic: "orders", Partition: 0}, "orders", -1, "")
	env := &oppositeDouble{}
	r := &sourceRun{t: &sourceTask{dataPath: DataPathC}, env: env, log: slog.New(slog.DiscardHandler), limit: lograte.New(time.Minute),
		sourceAlias: "B", targetAlias: "A", parts: []*sourcePartition{p}, bySource: map[string][]*sourcePartition{"orders": {p}}}

	r.discoverOpposite(ctx)
	require.Empty(t, env.queries, "provenance off: no lookup")
	r.t.cfg.Kmirror.ProvenanceEnabled = true
	r.discoverOpposite(ctx)
	require.Len(t, env.queries, 1)
	require.True(t, r.usesCPath(), "no opposite flow: the C path")
	r.rule.onC = true
	require.NoError(t, r.discoverOnC(ctx), "looked a moment ago")

	env.set(kmtype.TargetRange{Topic: "orders", Partition: 0, Start: 0, End: 9})
	r.rule.loaded = time.Time{}
	err := r.discoverOnC(ctx)
	var pe *pipelineError
	require.ErrorAs(t, err, &pe, "a pipeline restart")
	require.ErrorIs(t, err, errHeaderlessRule)
	require.False(t, r.usesCPath(), "the next pipeline runs on the Go engine")
}
