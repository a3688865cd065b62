package tasks

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/kmtype"
)

// Registry creates connector instances and tasks from their configs. The server hands the runtime an
// implementation backed by the connector plugins, so the runtime itself knows nothing about Kafka.
type Registry interface {
	// NewConnector returns a connector instance for config (which includes connector.class).
	NewConnector(name string, config map[string]string) (Connector, error)
	// NewTask returns a task for one of the task configs the connector published.
	NewTask(id TaskID, config map[string]string) (Task, error)
}

// TaskID names a task: the connector and the task's index in the connector's task set.
type TaskID struct {
	Connector string
	Task      int
}

// String renders the id as Connect does: "<connector>-<task>".
func (id TaskID) String() string { return fmt.Sprintf("%s-%d", id.Connector, id.Task) }

// Connector is a running connector instance. Run lasts until ctx is done (then it returns nil) or the connector
// fails (then it returns the error that becomes its FAILED trace). It publishes its task set with
// env.SetTaskConfigs whenever the set changes. Like a Task, it must return once env.StopContext() is done.
type Connector interface {
	Run(ctx context.Context, env ConnectorEnv) error
}

// ConnectorEnv is what a running connector instance may ask of the runtime.
type ConnectorEnv interface {
	// Running records that the instance has started; its status becomes RUNNING.
	Running(ctx context.Context) error
	// SetTaskConfigs publishes the connector's task set. Tasks whose config changed are restarted. ErrFenced
	// means the instance lost its assignment and must stop.
	SetTaskConfigs(ctx context.Context, configs []map[string]string) error
	// RetainPartitionStats drops the published partition stats (GET /connectors/{c}/partitions) of every
	// partition that plan does not give to the task that published them: the rows of partitions no task owns
	// any more would otherwise linger. ErrFenced as for SetTaskConfigs.
	RetainPartitionStats(ctx context.Context, plan []kmtype.PartitionOwner) error
	// PartitionStats returns what the connector's tasks last published of their partitions (running, paused or
	// as they stopped): the end offsets last seen of partitions whose topic is gone tell what it took with it.
	PartitionStats(ctx context.Context) ([]kmtype.PartitionStat, error)
	// ReadOffsets returns every stored source offset of the connector.
	ReadOffsets(ctx context.Context) ([]kmtype.Offset, error)
	// RecordLoss keeps a notice about records lost for good beyond this run (a worker restart, a move, a pause
	// or a stop), with only the connector's newest keep such notices; an explicit restart of the connector
	// clears them. ErrFenced as for SetTaskConfigs.
	RecordLoss(ctx context.Context, loss kmtype.Loss, keep int) error
	// Losses returns the notices RecordLoss kept, oldest first.
	Losses(ctx context.Context) ([]kmtype.Loss, error)
	// PartitionRates returns the byte rate each partition's task last reported, with the report's age, for
	// moving partitions between the connector's tasks by load.
	PartitionRates(ctx context.Context) ([]kmtype.PartitionRate, error)
	// Report keeps the connector RUNNING and shows notices in its status (their messages as its trace; none
	// clears them), for problems an operator must fix while the rest goes on, such as a remote topic the target
	// refuses to create.
	Report(ctx context.Context, notices []kmtype.Notice) error
	// Failing shows the connector FAILED with err as its trace while the run goes on: for a job the run keeps
	// retrying (a cluster that cannot be reached, a topic it cannot create or list). Connect would need a
	// restart after a failure; here the next Running or Report, once the job succeeds, shows it RUNNING again,
	// and the trace says so.
	Failing(ctx context.Context, err error) error
	// TaskConfigs returns the connector's current task set, as published by this run or an earlier one (with
	// an earlier config, maybe): a new run carries on from it instead of dealing afresh.
	TaskConfigs(ctx context.Context) ([]map[string]string, error)
	// StopContext is done when the stop budget of this run is spent: from then on the run must return at once.
	StopContext() context.Context
	Logger() *slog.Logger
}

// PartitionOwner is a partition of a connector's plan and the task that replicates it (RetainPartitionStats).
type PartitionOwner = kmtype.PartitionOwner

// PartitionRate is a partition's byte rate as its task last reported it (ConnectorEnv.PartitionRates).
type PartitionRate = kmtype.PartitionRate

// Task is one running task. Run lasts until ctx is done — then it drains, flushes and commits what the target
// acknowledged, and returns nil — or until it fails for good, returning the error that becomes its FAILED trace.
// Transient errors are the task's to retry. The soft stop (ctx done) has a budget: when env.StopContext() is
// done the task drops what it has not delivered, commits what was acknowledged, and returns at once. Writes to
// external systems are allowed only while env.Lease() is valid (see tasks/doc.go, "Fencing").
type Task interface {
	Run(ctx context.Context, env TaskEnv) error
}

// TaskEnv is what a running task may ask of the runtime.
type TaskEnv interface {
	// Running records that the task has started its work; its status becomes RUNNING.
	Running(ctx context.Context) error
	// ReadOffsets returns every stored source offset of the connector.
	ReadOffsets(ctx context.Context) ([]kmtype.Offset, error)
	// CommitOffsets stores source offsets. ErrFenced means the task lost its assignment and must stop without
	// committing anything more.
	CommitOffsets(ctx context.Context, offsets []kmtype.Offset) error
	// CommitProgress stores offsets and the offset-map ranges that cover them in one transaction (see
	// CommitOffsets).
	CommitProgress(ctx context.Context, offsets []kmtype.Offset, ranges []kmtype.OffsetRange) error
	// LastOffsetRanges returns the newest stored offset-map range of each partition that has one.
	LastOffsetRanges(ctx context.Context, keys []kmtype.RangeKey) (map[kmtype.RangeKey]kmtype.OffsetRange, error)
	// PruneOffsetRanges drops a partition's ranges below logStart and all but the newest keep.
	PruneOffsetRanges(ctx context.Context, key kmtype.RangeKey, logStart int64, keep int) error
	// OffsetRangesAround returns, for each query, the offset-map ranges around its offset.
	OffsetRangesAround(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.RangesAround, error)
	// OffsetRangesAroundTarget is OffsetRangesAround for queries whose offset is a target offset.
	OffsetRangesAroundTarget(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.RangesAround, error)
	// OppositeRanges returns, for partitions this flow reads (each query's RangeKey as this flow's), the target
	// offset ranges the opposite flows (source and target swapped, same topic name) wrote into them and stored,
	// those ending at or after each query's Offset.
	OppositeRanges(ctx context.Context, queries []kmtype.RangeQuery) ([]kmtype.TargetRange, error)
	// PartitionStats returns what the connector's tasks last published of their partitions, this task's earlier
	// runs (running or paused) included.
	PartitionStats(ctx context.Context) ([]kmtype.PartitionStat, error)
	// PublishPartitionStats publishes where the task's partitions stand (GET /connectors/{c}/partitions).
	// ErrFenced as for CommitOffsets.
	PublishPartitionStats(ctx context.Context, stats []kmtype.PartitionStat) error
	// PublishPipelineStat publishes what the task measured of its pipeline (capacity advice); the runtime adds
	// its worker's CPU use. ErrFenced as for CommitOffsets.
	PublishPipelineStat(ctx context.Context, stat kmtype.PipelineStat) error
	// PutGroupOffsets publishes the latest translations of groups (GET /connectors/{c}/groups). ErrFenced as
	// for CommitOffsets.
	PutGroupOffsets(ctx context.Context, groups []string, offsets []kmtype.GroupOffset) error
	// RecordTopics adds topics to the connector's active topics (GET /connectors/{c}/topics).
	RecordTopics(ctx context.Context, topics []string) error
	// Report keeps the task RUNNING and shows notices in its status (their messages as its trace; none clears
	// them). Tasks use it for what an operator must know while replication goes on: data lost to retention
	// before it could be replicated, a cluster that is unreachable.
	Report(ctx context.Context, notices []kmtype.Notice) error
	// FenceTaskSet returns once every transactional id the connector's previous task sets used for partitions
	// that may have moved is fenced in Kafka (tasks/fence.go). If this run is the one to fence them, it calls
	// fence with their task ids; other runs wait. Exactly-once tasks call it before they initialize
	// transactions. ErrFenced as for CommitOffsets.
	FenceTaskSet(ctx context.Context, fence FenceFunc) error
	// Lease says whether the task may write to Kafka now.
	Lease() Lease
	// StopContext is done when the stop budget of this run is spent (see Task).
	StopContext() context.Context
	Logger() *slog.Logger
}

// FenceFunc fences the transactional ids of the given task ids of a connector in Kafka.
type FenceFunc func(ctx context.Context, taskIDs []int) error

// OffsetsWriter is implemented by a Registry whose connectors keep source offsets outside PostgreSQL too (an
// exactly-once source connector: the offsets topic on the target). The run holding a STOPPED connector's unit
// calls WriteOffsets for each change of its offsets filed through the REST API (store.RequestOffsets), before
// the change is applied to PostgreSQL; an error fails the request with its text, and PostgreSQL stays as it
// was. A connector with nothing to write returns nil.
type OffsetsWriter interface {
	// WritesOffsets tells whether a connector of this config has offsets to write outside PostgreSQL; only
	// then does its STOPPED run look for offset changes to apply.
	WritesOffsets(config map[string]string) bool
	WriteOffsets(ctx context.Context, env OffsetsEnv, connector string, config map[string]string, offsets []kmtype.Offset, reset bool) error
}

// OffsetsEnv is what WriteOffsets may ask of the runtime.
type OffsetsEnv interface {
	// ReadOffsets returns every stored source offset of the connector (PostgreSQL's copy).
	ReadOffsets(ctx context.Context) ([]kmtype.Offset, error)
	// FenceTaskSet is TaskEnv's: it returns once the connector's former task sets are fenced in Kafka.
	FenceTaskSet(ctx context.Context, fence FenceFunc) error
	Logger() *slog.Logger
}

// Lease is a run's permission to write to external systems. The runtime starts no other run of the unit until
// the lease has ended and Settle has passed since, so a run that hands a record to its client only while Valid
// and makes the client deliver or drop it within Settle can never write after its successor started.
type Lease interface {
	// Valid tells whether the run may hand new records to its clients now. It turns false when the worker's
	// heartbeats have not been confirmed for a while (it may turn true again) and for good once Revoked.
	Valid() bool
	// ValidFor is how much longer the run may hand new records over unless the lease is extended meanwhile:
	// zero when it is not Valid. A writer that may wait between its check and the hand-over (a C loop
	// waiting for records) bounds the hand-over by it, on the monotonic clock, rather than trust Valid's
	// answer from before the wait.
	ValidFor() time.Duration
	// Revoked is closed when the run has lost its unit for good: it must stop writing at once and drop what
	// it has queued.
	Revoked() <-chan struct{}
	// Settle bounds how long a record handed to a client may take to be written or dropped.
	Settle() time.Duration
}
