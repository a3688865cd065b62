package source

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
)

// stoppedRecorder is a STOPPED connector's run: the stats the stop kept, the committed offsets, and what the watch
// records of the partitions' ends.
type stoppedRecorder struct {
	stats      []kmtype.PartitionStat
	offsets    []kmtype.Offset
	refreshed  [][]kmtype.PartitionEnd
	statsErr   error
	offsetsErr error
	refreshErr error
}

func (e *stoppedRecorder) PartitionStats(context.Context) ([]kmtype.PartitionStat, error) {
	return e.stats, e.statsErr
}
func (e *stoppedRecorder) ReadOffsets(context.Context) ([]kmtype.Offset, error) {
	return e.offsets, e.offsetsErr
}
func (e *stoppedRecorder) RefreshPartitionEnds(_ context.Context, ends []kmtype.PartitionEnd) error {
	if e.refreshErr != nil {
		return e.refreshErr
	}
	e.refreshed = append(e.refreshed, slices.Clone(ends)) // as stored: the watch reuses its slice
	return nil
}
func (e *stoppedRecorder) StopContext() context.Context { return context.Background() }
func (e *stoppedRecorder) Logger() *slog.Logger         { return slog.New(slog.DiscardHandler) }

func (e *stoppedRecorder) last() []kmtype.PartitionEnd {
	if len(e.refreshed) == 0 {
		return nil
	}
	return e.refreshed[len(e.refreshed)-1]
}

func committedOffset(cluster, topic string, partition int32, offset int64, id string) kmtype.Offset {
	return kmtype.Offset{Partition: map[string]any{"cluster": cluster, "topic": topic, "partition": float64(partition)},
		Offset: map[string]any{"offset": offset}, SourceID: id}
}

// A stopped connector's watch keeps each kept partition's position at its committed offset and its end at the
// source's, except for a topic that is gone or is another incarnation than the one its offsets belong to: its
// end stays the one last seen, which is what the next run judges the deletion on.
func TestStoppedWatchRecordsEndsOnlyOfTheIncarnationReplicated(t *testing.T) {
	ctx := context.Background()
	src := newFakeSource()
	idOrders, err := src.log.CreateTopic("orders", 2)
	require.NoError(t, err)
	_, err = src.log.CreateTopic("audit", 1)
	require.NoError(t, err)
	_, err = src.log.AppendValues("orders", 0, "a", "b", "c")
	require.NoError(t, err)
	_, err = src.log.AppendValues("orders", 1, "a")
	require.NoError(t, err)
	_, err = src.log.AppendValues("audit", 0, "a", "b")
	require.NoError(t, err)

	env := &stoppedRecorder{}
	w := &stoppedWatch{env: env, admin: src, alias: "A", ids: map[string]string{}}
	more, err := w.look(ctx)
	require.NoError(t, err)
	require.True(t, more, "no stats yet: the stopping tasks' last reports may still come")
	require.Empty(t, env.refreshed)

	env.stats = []kmtype.PartitionStat{{Topic: "orders", Partition: 0}, {Topic: "orders", Partition: 1}, {Topic: "audit", Partition: 0}}
	env.offsets = []kmtype.Offset{
		committedOffset("A", "orders", 0, 1, idOrders),
		committedOffset("A", "orders", 1, 0, "old-incarnation"), // its topic was re-created since it was committed
		committedOffset("C", "audit", 0, 5, ""),                 // another source cluster's
	}
	more, err = w.look(ctx)
	require.NoError(t, err)
	require.True(t, more)
	require.Len(t, env.refreshed, 2, "positions first, then the ends")
	require.Equal(t, []kmtype.PartitionEnd{
		{Topic: "orders", Partition: 0, Next: 2, End: -1},
		{Topic: "orders", Partition: 1, Next: 1, End: -1},
		{Topic: "audit", Partition: 0, Next: -1, End: -1},
	}, env.refreshed[0], "the committed positions are recorded before the source is asked")
	require.Equal(t, []kmtype.PartitionEnd{
		{Topic: "orders", Partition: 0, Next: 2, End: 3},
		{Topic: "orders", Partition: 1, Next: 1, End: -1},
		{Topic: "audit", Partition: 0, Next: -1, End: 2},
	}, env.last(), "the end of another incarnation is not recorded; a topic without offsets adopts the one seen first")

	// audit is deleted and re-created: the watch keeps to the incarnation it adopted, and a deleted topic is left
	// out of the request (which would fail as a whole).
	require.NoError(t, src.log.DeleteTopic("audit"))
	_, err = src.log.CreateTopic("audit", 1)
	require.NoError(t, err)
	_, err = src.log.AppendValues("audit", 0, "x", "y", "z", "w")
	require.NoError(t, err)
	require.NoError(t, src.log.DeleteTopic("orders"))
	_, err = w.look(ctx)
	require.NoError(t, err)
	for _, e := range env.last() {
		require.Equal(t, int64(-1), e.End, "%s-%d: gone or another incarnation", e.Topic, e.Partition)
	}
}

// Failures are waited out (the next look tries again), except a lost unit: the run ends.
func TestStoppedWatchRetriesAllButALostUnit(t *testing.T) {
	ctx := context.Background()
	src := newFakeSource()
	_, err := src.log.CreateTopic("orders", 1)
	require.NoError(t, err)
	env := &stoppedRecorder{stats: []kmtype.PartitionStat{{Topic: "orders", Partition: 0}}}
	w := &stoppedWatch{env: env, admin: src, alias: "A", ids: map[string]string{}}

	for _, fail := range []func(error){
		func(err error) { env.statsErr = err },
		func(err error) { env.offsetsErr = err },
		func(err error) { env.refreshErr = err },
		src.failing,
	} {
		fail(errors.New("down"))
		more, err := w.look(ctx)
		require.NoError(t, err)
		require.True(t, more)
		require.True(t, w.failing)
		fail(nil)
	}
	more, err := w.look(ctx)
	require.NoError(t, err)
	require.True(t, more)
	require.False(t, w.failing, "works again")

	env.refreshErr = kmtype.ErrFenced
	more, err = w.look(ctx)
	require.ErrorIs(t, err, kmtype.ErrFenced)
	require.False(t, more)
}

// A stopped connector's watch opens its admin client from the connector's config and looks until the unit is
// let go; a disabled connector has nothing to watch.
func TestWatchStoppedRunsUntilLetGo(t *testing.T) {
	p := New(slog.New(slog.DiscardHandler), nil)
	parse := func(raw map[string]string) connectors.Config {
		cfg, err := connectors.ParseConfig(mustPlugin(t), raw, clientconfig.Options{})
		require.NoError(t, err)
		return cfg
	}
	env := &countingStopped{stoppedRecorder: &stoppedRecorder{statsErr: errors.New("database down")}, looked: make(chan struct{}, 10)}
	raw := fakePlannerConfig("t")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- p.WatchStopped(ctx, env, "mm2", parse(raw)) }()
	<-env.looked
	<-env.looked // a failed look is retried
	cancel()
	require.NoError(t, <-done)

	raw["enabled"] = "false"
	require.NoError(t, p.WatchStopped(context.Background(), env, "mm2", parse(raw)), "returns at once")
}

func mustPlugin(t *testing.T) mirrorconfig.Plugin {
	p, ok := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	require.True(t, ok)
	return p
}

// countingStopped tells each look as it reads the stats.
type countingStopped struct {
	*stoppedRecorder
	looked chan struct{}
}

func (e *countingStopped) PartitionStats(ctx context.Context) ([]kmtype.PartitionStat, error) {
	e.looked <- struct{}{}
	return e.stoppedRecorder.PartitionStats(ctx)
}
