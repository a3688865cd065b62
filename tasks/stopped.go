package tasks

import (
	"context"
	"log/slog"
	"strings"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// StoppedWatcher is implemented by a Registry whose connectors keep looking at their source while STOPPED. A
// STOPPED connector has no tasks, but the stop keeps its partitions' last stats (store.StopTaskSet): the run
// holding the connector's unit calls WatchStopped, which keeps their end offsets up to date until ctx is done,
// so that a source topic deleted while the connector is stopped is judged, when it runs again, on what was
// last seen of it seconds before. It returns nil when ctx is done, or at once for a connector with nothing to
// watch; it must return once env.StopContext() is done.
type StoppedWatcher interface {
	WatchStopped(ctx context.Context, env StoppedEnv, connector string, config map[string]string) error
}

// StoppedEnv is what WatchStopped may ask of the runtime.
type StoppedEnv interface {
	// PartitionStats returns the partitions' stats the stop kept (ConnectorEnv's).
	PartitionStats(ctx context.Context) ([]kmtype.PartitionStat, error)
	// ReadOffsets returns every stored source offset of the connector.
	ReadOffsets(ctx context.Context) ([]kmtype.Offset, error)
	// RefreshPartitionEnds records the end offsets just seen of partitions in PartitionStats; ErrFenced once the
	// run lost the connector's unit.
	RefreshPartitionEnds(ctx context.Context, ends []kmtype.PartitionEnd) error
	StopContext() context.Context
	Logger() *slog.Logger
}

// stoppedEnv is the StoppedEnv of a STOPPED connector's run.
type stoppedEnv struct{ *runEnv }

func (e stoppedEnv) RefreshPartitionEnds(ctx context.Context, ends []kmtype.PartitionEnd) error {
	return e.w.store.RefreshPartitionEnds(ctx, e.claim, ends)
}

// watchStopped runs the registry's StoppedWatcher, if any, for the STOPPED connector whose unit env's run
// holds, until ctx is done.
func (w *worker) watchStopped(ctx context.Context, env *runEnv) {
	sw, ok := w.registry.(StoppedWatcher)
	if !ok {
		return
	}
	err := safely(func() error {
		return sw.WatchStopped(ctx, stoppedEnv{env}, env.work.Connector, env.work.ConnectorConfig)
	})
	if err != nil && !quiet(err) && ctx.Err() == nil {
		env.log.Warn("watching the stopped connector's source ended with an error", "error", err)
	}
}

// putIdleStatus shows a paused or stopped unit's state. A connector's lasting loss notices (RecordLoss) stay
// shown while nothing runs: what was lost does not go away with a pause or a stop.
func (w *worker) putIdleStatus(ctx context.Context, c store.Claim, state string) error {
	if c.Unit.Task != store.ConnectorUnit {
		return w.putStatus(ctx, c, state, "")
	}
	losses, err := w.store.Losses(ctx, c.Unit.Connector)
	if err != nil {
		return err // retried, as the status write is
	}
	if len(losses) == 0 {
		return w.putStatus(ctx, c, state, "")
	}
	notices, msgs, kinds := make([]kmtype.Notice, len(losses)), make([]string, len(losses)), make([]string, len(losses))
	for i, l := range losses {
		notices[i], msgs[i], kinds[i] = l.Notice, l.Notice.Message, l.Notice.Kind
	}
	err = w.store.PutStatus(ctx, store.Status{Unit: c.Unit, State: state, WorkerID: w.id, Trace: strings.Join(msgs, "\n"),
		Notices: notices, Epoch: c.Epoch})
	if err == nil {
		w.observer.UnitState(c.Unit.Connector, c.Unit.Task, state)
		w.observer.UnitNotices(c.Unit.Connector, c.Unit.Task, kinds)
	}
	return err
}
