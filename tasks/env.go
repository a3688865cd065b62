package tasks

import (
	"context"
	"log/slog"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// runEnv is what every run of a unit shares with the runtime: the claim that fences its writes, its lease,
// and the context that ends its stop budget.
type runEnv struct {
	w       *worker
	work    store.Work
	claim   store.Claim
	lease   *runLease
	stopCtx context.Context
	log     *slog.Logger
}

func (e *runEnv) Running(ctx context.Context) error {
	return e.w.putStatus(ctx, e.claim, store.StateRunning, "")
}

func (e *runEnv) Report(ctx context.Context, notices []kmtype.Notice) error {
	return e.w.putNotices(ctx, e.claim, store.StateRunning, notices)
}

func (e *runEnv) PartitionStats(ctx context.Context) ([]kmtype.PartitionStat, error) {
	return e.w.store.ConnectorPartitionStats(ctx, e.work.Connector)
}

func (e *runEnv) ReadOffsets(ctx context.Context) ([]kmtype.Offset, error) {
	return e.w.store.Offsets(ctx, e.work.Connector)
}

func (e *runEnv) StopContext() context.Context { return e.stopCtx }
func (e *runEnv) Logger() *slog.Logger         { return e.log }

// connectorEnv is the ConnectorEnv of one connector instance run.
type connectorEnv struct{ *runEnv }

func (e connectorEnv) RecordLoss(ctx context.Context, loss kmtype.Loss, keep int) error {
	return e.w.store.PutLoss(ctx, e.claim, loss, keep)
}

func (e connectorEnv) Losses(ctx context.Context) ([]kmtype.Loss, error) {
	return e.w.store.Losses(ctx, e.work.Connector)
}

func (e connectorEnv) SetTaskConfigs(ctx context.Context, configs []map[string]string) error {
	changed, err := e.w.store.ReplaceTaskConfigs(ctx, e.claim, configs)
	if err != nil {
		return err
	}
	if changed {
		e.log.Info("published task configs", "tasks", len(configs))
	}
	return nil
}

// failingRetried ends the trace of a connector that is Failing.
const failingRetried = "kmirror retries this; the connector returns to RUNNING by itself once it succeeds (no restart needed)."

func (e connectorEnv) Failing(ctx context.Context, err error) error {
	return e.w.putStatus(ctx, e.claim, store.StateFailed, trace(err, e.work, e.w.id)+"\n"+failingRetried)
}

func (e connectorEnv) TaskConfigs(ctx context.Context) ([]map[string]string, error) {
	tcs, err := e.w.store.TaskConfigs(ctx, e.work.Connector)
	if err != nil {
		return nil, err
	}
	out := make([]map[string]string, len(tcs))
	for i, tc := range tcs {
		out[i] = tc.Config
	}
	return out, nil
}

func (e connectorEnv) RetainPartitionStats(ctx context.Context, plan []kmtype.PartitionOwner) error {
	n, err := e.w.store.RetainPartitionStats(ctx, e.claim, plan)
	if err != nil {
		return err
	}
	if n > 0 {
		e.log.Info("dropped the published stats of partitions the plan no longer gives to the task that reported them", "rows", n)
	}
	return nil
}

func (e connectorEnv) PartitionRates(ctx context.Context) ([]kmtype.PartitionRate, error) {
	return e.w.store.PartitionRates(ctx, e.work.Connector)
}

// taskEnv is the TaskEnv of one task run.
type taskEnv struct{ *runEnv }

func (e taskEnv) CommitOffsets(ctx context.Context, offsets []kmtype.Offset) error {
	return e.w.store.CommitOffsets(ctx, e.claim, offsets)
}

func (e taskEnv) CommitProgress(ctx context.Context, offsets []kmtype.Offset, ranges []kmtype.OffsetRange) error {
	return e.w.store.CommitProgress(ctx, e.claim, offsets, ranges)
}

func (e taskEnv) LastOffsetRanges(ctx context.Context, keys []kmtype.RangeKey) (map[kmtype.RangeKey]kmtype.OffsetRange, error) {
	return e.w.store.LastOffsetRanges(ctx, keys)
}

func (e taskEnv) PruneOffsetRanges(ctx context.Context, key kmtype.RangeKey, logStart int64, keep int) error {
	_, err := e.w.store.PruneOffsetRanges(ctx, key, logStart, keep)
	return err
}

func (e taskEnv) OffsetRangesAround(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.RangesAround, error) {
	return e.w.store.OffsetRangesAround(ctx, queries)
}

func (e taskEnv) OffsetRangesAroundTarget(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.RangesAround, error) {
	return e.w.store.OffsetRangesAroundTarget(ctx, queries)
}

func (e taskEnv) OppositeRanges(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.TargetRange, error) {
	return e.w.store.OppositeRanges(ctx, queries)
}

func (e taskEnv) PublishPartitionStats(ctx context.Context, stats []kmtype.PartitionStat) error {
	return e.w.store.PutPartitionStats(ctx, e.claim, e.w.id, stats)
}

func (e taskEnv) PublishPipelineStat(ctx context.Context, st kmtype.PipelineStat) error {
	st.WorkerCPUCores, st.WorkerCPUs = e.w.cpu.cores()
	return e.w.store.PutTaskStat(ctx, e.claim, e.w.id, st)
}

func (e taskEnv) PutGroupOffsets(ctx context.Context, groups []string, offsets []kmtype.GroupOffset) error {
	return e.w.store.PutGroupOffsets(ctx, e.claim, groups, offsets)
}

func (e taskEnv) RecordTopics(ctx context.Context, topics []string) error {
	return e.w.store.RecordTopics(ctx, e.work.Connector, topics)
}

func (e taskEnv) Lease() Lease { return e.lease }
