package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// checkpointTask is MirrorCheckpointTask: every emit.checkpoints.interval.seconds it reads its groups'
// committed offsets on the source, translates them to the target — exactly from the offset map the source
// tasks keep, else from MM2's offset syncs — and writes checkpoints that moved forward (or that follow a
// group rewound on the source) to the checkpoints topic; with sync.group.offsets.enabled it also commits the
// translated offsets to target groups nobody is consuming with.
type checkpointTask struct {
	id      tasks.TaskID
	cfg     config
	log     *slog.Logger
	metrics *metrics.Registry // nil without metrics
}

// checkpointKey identifies a checkpoint: a group and a downstream topic-partition.
type checkpointKey struct {
	group string
	tp    mirror.TopicPartition
}

// checkpointRun is one run of a checkpoint task.
type checkpointRun struct {
	t      *checkpointTask
	env    tasks.TaskEnv
	log    *slog.Logger
	limit  *lograte.Limiter
	groups []string

	sourceAlias, targetAlias string
	policy                   mirror.ReplicationPolicy
	topicFilter              *mirror.TopicFilter
	topic                    string // the checkpoints topic on the target

	source, target *kafka.Admin
	producer       *kafka.Producer
	deliveries     chan kafka.Delivery
	closing        chan struct{} // closed when the run ends: deliveries are dropped from then on
	syncs          *mirror.OffsetSyncStore
	syncsNext      int64 // the next offset of the offset-syncs topic to index (owned by tailOffsetSyncs)
	syncsReady     bool  // the initial read reached the end

	mu   sync.Mutex
	last map[checkpointKey]mirror.Checkpoint // the latest checkpoint per key on the topic (CheckpointStore)

	// Owned by the task's loop.
	active   *connectors.TopicRecorder // records the checkpoints topic once checkpoints reach it (GET .../topics)
	rounds   int64                     // checkpoint rounds so far (routes deliveries to their round)
	failures int                       // checkpoints of the current round that were not written
	notices  map[string]kmtype.Notice
	reported string // the notices last published
}

func (t *checkpointTask) Run(ctx context.Context, env tasks.TaskEnv) error {
	r, err := t.prepare(ctx, env)
	if err != nil {
		return err
	}
	defer r.close(ctx)
	syncsCtx, stopSyncs := context.WithCancel(ctx)
	syncsDone := make(chan struct{})
	go func() {
		defer close(syncsDone)
		r.tailOffsetSyncs(syncsCtx)
	}()
	defer func() {
		stopSyncs()
		<-syncsDone
	}()
	if err := env.Running(ctx); err != nil {
		return err
	}

	emitEvery := time.Duration(t.cfg.EmitCheckpointsIntervalSeconds) * time.Second
	emitEvery = max(emitEvery, time.Second)
	if m := t.metrics; m != nil {
		// From the start, so that a task whose rounds never succeed shows its rounds late, not missing.
		m.CheckpointRound(t.id.Connector, t.id.Task, emitEvery, time.Now())
		defer m.RemoveCheckpointTask(t.id.Connector, t.id.Task)
	}
	emit := time.NewTimer(0) // the first round at once: an operator should not wait a minute for the first answer
	defer emit.Stop()
	var syncGroups <-chan time.Time
	if t.cfg.SyncGroupOffsetsEnabled {
		every := max(time.Duration(t.cfg.SyncGroupOffsetsIntervalSeconds)*time.Second, time.Second)
		tick := time.NewTicker(every)
		defer tick.Stop()
		syncGroups = tick.C
	}
	revoked := env.Lease().Revoked()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-revoked:
			return kmtype.ErrFenced
		case <-emit.C:
			began := time.Now()
			if err := r.producer.AuthFailure(); err != nil {
				// Its checkpoints would wait for a connection that cannot succeed.
				return fmt.Errorf("emit checkpoints to cluster %s: authenticate: %w", t.cfg.TargetAlias(), err)
			}
			if err := r.round(ctx); err != nil {
				if errors.Is(err, kmtype.ErrFenced) {
					return err
				}
				if ctx.Err() != nil {
					return nil
				}
				if kafka.IsAuthentication(err) {
					return err // the next round would present the same credentials
				}
				r.limit.Log(ctx, r.log, slog.LevelWarn, "round", "checkpoint round failed, will retry", "error", err)
			} else if m := t.metrics; m != nil {
				m.CheckpointRound(t.id.Connector, t.id.Task, emitEvery, time.Now())
			}
			r.log.Debug("checkpoint round", "groups", len(r.groups), "took", time.Since(began))
			emit.Reset(max(emitEvery-time.Since(began), 0))
		case <-syncGroups:
			if err := r.syncGroupOffsets(ctx); err != nil && ctx.Err() == nil {
				if kafka.IsAuthentication(err) {
					return err
				}
				r.limit.Log(ctx, r.log, slog.LevelWarn, "sync-groups", "syncing target group offsets failed, will retry", "error", err)
			}
		}
	}
}

func (t *checkpointTask) prepare(ctx context.Context, env tasks.TaskEnv) (*checkpointRun, error) {
	policy, err := mirror.NewReplicationPolicy(t.cfg.Raw)
	if err != nil {
		return nil, err
	}
	topicFilter, err := mirror.NewTopicFilter(t.cfg.Raw)
	if err != nil {
		return nil, err
	}
	r := &checkpointRun{
		t: t, env: env, log: t.log, limit: lograte.New(time.Minute),
		sourceAlias: t.cfg.SourceAlias(), targetAlias: t.cfg.TargetAlias(),
		policy: policy, topicFilter: topicFilter,
		last: map[checkpointKey]mirror.Checkpoint{},
	}
	r.topic = policy.CheckpointsTopic(r.sourceAlias)
	r.active = connectors.NewTopicRecorder(env, r.topic, t.log)
	for _, g := range strings.Split(t.cfg.Raw[mirror.TaskAssignedGroupsConfig], ",") {
		if g = strings.TrimSpace(g); g != "" {
			r.groups = append(r.groups, g)
		}
	}
	index, _ := strconv.Atoi(t.cfg.Raw[mirror.TaskIndexConfig])
	if r.source, err = t.cfg.NewAdmin(clientconfig.SourceAdmin, t.id.Connector, index, t.log); err != nil {
		return nil, err
	}
	if r.target, err = t.cfg.NewAdmin(clientconfig.TargetAdmin, t.id.Connector, index, t.log); err != nil {
		r.source.Close()
		return nil, err
	}
	props, err := t.cfg.ClientProps(clientconfig.CheckpointsProducer, t.id.Connector, index)
	if err != nil {
		r.close(ctx)
		return nil, err
	}
	connectors.CapDelivery(props, env.Lease().Settle(), r.log)
	r.deliveries = make(chan kafka.Delivery, 1024)
	r.closing = make(chan struct{})
	onDelivery := func(d kafka.Delivery) {
		select {
		case r.deliveries <- d:
		case <-r.closing: // nobody waits any more: the run is ending
		}
	}
	if r.producer, err = kafka.NewProducer(props, r.log, onDelivery, kafka.WithDeliveryTimes()); err != nil {
		r.close(ctx)
		return nil, err
	}
	loaded := r.loadCheckpoints(ctx, index)
	// As MM2: with the checkpoints loaded, the whole sync history is indexed; without them only the latest
	// sync per partition from before the start is kept (conservative).
	r.syncs = mirror.NewOffsetSyncStoreReadToEnd(!loaded)
	return r, nil
}

// close ends the run's clients. A stopping run (ctx done) delivers the checkpoints it queued within its stop
// budget (tasks.Task); a failed one drops them: the next run writes its own.
func (r *checkpointRun) close(ctx context.Context) {
	if r.closing != nil {
		close(r.closing)
	}
	if r.producer != nil {
		if ctx.Err() != nil {
			r.producer.Flush(r.env.StopContext())
		}
		r.producer.Close()
	}
	r.removeMetrics()
	if r.target != nil {
		r.target.Close()
	}
	if r.source != nil {
		r.source.Close()
	}
}

// loadCheckpoints reads the checkpoints already on the topic for this task's groups (MM2's CheckpointStore),
// so a restarted task keeps them monotonic. It reports whether the read succeeded.
func (r *checkpointRun) loadCheckpoints(ctx context.Context, index int) bool {
	props, err := r.t.cfg.ClientProps(clientconfig.CheckpointsConsumer, r.t.id.Connector, index)
	if err != nil {
		r.log.Warn("cannot read the checkpoints topic", "error", err)
		return false
	}
	mine := make(map[string]bool, len(r.groups))
	for _, g := range r.groups {
		mine[g] = true
	}
	readCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	skipped := 0
	_, err = kafka.ReadTopic(readCtx, props, r.topic, r.log, func(rec kafka.Record) error {
		if rec.Partition() != 0 || rec.Key() == nil || rec.Value() == nil {
			return nil
		}
		c, err := mirror.DecodeCheckpoint(rec.Key(), rec.Value())
		if err != nil {
			skipped++
			return nil
		}
		if mine[c.Group] {
			r.last[checkpointKey{c.Group, c.TopicPartition()}] = c
		}
		return nil
	})
	if skipped > 0 {
		r.log.Warn("skipped undecodable records on the checkpoints topic", "topic", r.topic, "records", skipped)
	}
	if err != nil {
		r.log.Warn("could not load the checkpoints topic; offset syncs from before this start are indexed conservatively", "topic", r.topic, "error", err)
		return false
	}
	return true
}
