package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/planner"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// sourceConnector is MirrorSourceConnector, the planning side of replication: it creates the offset-syncs
// topic, finds the source partitions to replicate, creates and grows their remote topics, deals the
// partitions to tasks, and keeps remote topic configs and ACLs in step with the source.
type sourceConnector struct {
	name       string
	cfg        config
	log        *slog.Logger
	assignment TaskAssignment
	metrics    *metrics.Registry // nil: no metrics
}

func (c *sourceConnector) Run(ctx context.Context, env tasks.ConnectorEnv) error {
	if !c.cfg.Enabled {
		c.log.Info("replication is disabled", "source", c.cfg.SourceAlias(), "target", c.cfg.TargetAlias())
		if err := env.Running(ctx); err != nil {
			return connectors.DropWhenDone(ctx, err)
		}
		if err := env.SetTaskConfigs(ctx, nil); err != nil {
			return connectors.DropWhenDone(ctx, err)
		}
		<-ctx.Done()
		return nil
	}
	r, err := c.newRun(env)
	if err != nil {
		return err
	}
	defer r.close()
	if err := env.Running(ctx); err != nil {
		return connectors.DropWhenDone(ctx, err)
	}
	r.resume(ctx)
	r.loadLosses(ctx)
	return r.loop(ctx)
}

// sourcePlanner is the state of one run of a source connector instance. Its jobs run one at a time on the Run
// goroutine, like the jobs of MM2's single-threaded Scheduler, so it needs no locking.
type sourcePlanner struct {
	name string
	cfg  config
	log  *slog.Logger
	env  tasks.ConnectorEnv

	sourceAlias, targetAlias string
	policy                   mirror.ReplicationPolicy
	selector                 mirror.TopicSelector
	configFilter             *mirror.ConfigPropertyFilter
	replicationFactor        int
	source, target           plannerAdmin

	topics       map[string]int          // replicated source topics -> partitions, as of the last plan
	remoteTopics map[string]int          // every target topic -> partitions, as of the last plan and creations
	order        []mirror.TopicPartition // the partitions tasks are dealt from (partitionOrder)
	assignment   TaskAssignment          // how order lists new partitions
	balancer     *planner.Balancer       // moves partitions by load; nil: they never move
	lastMove     map[int]string          // by task: its last move by load (mirror.TaskLastMoveConfig)
	metrics      *metrics.Registry       // nil: no metrics
	published    []map[string]string     // the task set last handed to the runtime
	planned      bool                    // a task set has been published in this run

	noSourceAuthorizer bool // the source said it has no authorizer; logged once at info
	noTargetAuthorizer bool // the same for the target

	// problems are the remote topics the target refused to create or grow, by remote topic: their partitions
	// cannot be replicated, so the connector's status says so until a later round succeeds.
	problems map[string]string
	reported string // the notice last shown in the connector's status

	// Partitions the source lost (deleted topics, or re-created with fewer partitions): those still planned
	// while their tasks drain them, and the notices of what they took with them (deleted.go).
	draining  map[mirror.TopicPartition]*drainState
	lost      map[string]kmtype.Notice
	lostOrder []string
	unsaved   []string // keys of lost notices not stored yet (saveLosses)
}

// plannerAdmin is what the connector asks of the source and target clusters; *kafka.Admin answers it.
type plannerAdmin interface {
	Topics(ctx context.Context) (map[string]int, error)
	TopicConfigs(ctx context.Context, topics []string) (map[string][]kafka.ConfigEntry, error)
	CreateTopics(ctx context.Context, topics []kafka.NewTopic) (map[string]error, error)
	CreatePartitions(ctx context.Context, topic string, total int) error
	AlterTopicConfigs(ctx context.Context, topic string, ops []kafka.ConfigOp) error
	TopicACLs(ctx context.Context) ([]kafka.TopicACL, error)
	CreateACLs(ctx context.Context, acls []kafka.TopicACL) error
	Close()
}

var _ plannerAdmin = (*kafka.Admin)(nil)

func (c *sourceConnector) newRun(env tasks.ConnectorEnv) (*sourcePlanner, error) {
	r, err := c.newPlanner(env)
	if err != nil {
		return nil, err
	}
	if r.source, err = r.newAdmin(clientconfig.SourceAdmin); err != nil {
		return nil, err
	}
	if r.target, err = r.newAdmin(clientconfig.TargetAdmin); err != nil {
		r.source.Close()
		return nil, err
	}
	return r, nil
}

// newPlanner is a run of the connector without its admin clients.
func (c *sourceConnector) newPlanner(env tasks.ConnectorEnv) (*sourcePlanner, error) {
	policy, err := mirror.NewReplicationPolicy(c.cfg.Raw)
	if err != nil {
		return nil, err
	}
	filter, err := mirror.NewTopicFilter(c.cfg.Raw)
	if err != nil {
		return nil, err
	}
	configFilter, err := mirror.NewConfigPropertyFilter(c.cfg.Raw)
	if err != nil {
		return nil, err
	}
	assignment := c.assignment
	if v := c.cfg.Kmirror.TaskAssignment; v != "" {
		if assignment, err = ParseTaskAssignment(v); err != nil {
			return nil, fmt.Errorf("%s: %w", mirrorconfig.TaskAssignmentConfig, err)
		}
	}
	r := &sourcePlanner{
		name: c.name, cfg: c.cfg, log: c.log, env: env, assignment: assignment, balancer: c.newBalancer(assignment), metrics: c.metrics,
		sourceAlias: c.cfg.SourceAlias(), targetAlias: c.cfg.TargetAlias(),
		policy: policy,
		selector: mirror.TopicSelector{Policy: policy, Filter: filter, TargetAlias: c.cfg.TargetAlias(),
			HeartbeatsReplication: c.cfg.HeartbeatsReplicationEnabled},
		configFilter:      configFilter,
		replicationFactor: c.cfg.ReplicationFactor,
	}
	return r, nil
}

func (r *sourcePlanner) newAdmin(role clientconfig.Role) (*kafka.Admin, error) {
	return r.cfg.NewAdmin(role, r.name, -1, r.log)
}

func (r *sourcePlanner) close() {
	r.source.Close()
	r.target.Close()
}

// retainStats drops the published stats of partitions the plan just published does not give to the task that
// reported them (a deleted or deselected topic, a partition moved to a task that has not reported yet), so
// that GET /connectors/{c}/partitions shows no partition nobody replicates. It runs on every plan round, not
// only when the task set changed, so that rows left by anything else are gone within a refresh interval. A
// failure other than fencing is logged: the next round tries again, and replication does not depend on it.
func (r *sourcePlanner) retainStats(ctx context.Context) error {
	var plan []kmtype.PartitionOwner
	for task, tps := range planner.Tasks(r.order, r.cfg.TasksMax) {
		for _, tp := range tps {
			plan = append(plan, kmtype.PartitionOwner{Topic: tp.Topic, Partition: tp.Partition, Task: task})
		}
	}
	err := r.env.RetainPartitionStats(ctx, plan)
	if errors.Is(err, kmtype.ErrFenced) {
		return err
	}
	if err != nil && ctx.Err() == nil {
		r.log.Warn("could not drop the stats of partitions outside the plan; will retry on the next plan round", "error", err)
	}
	return nil
}

// plannerJob is one of the connector's recurring jobs.
type plannerJob struct {
	what      string // for logs: "refresh topics"
	run       func(context.Context) error
	interval  time.Duration // <= 0: the job runs until it succeeds once
	afterPlan bool          // the job needs the replicated topics, so it first runs after the first plan

	next      time.Time // zero: not scheduled
	succeeded bool
	failures  int // in a row
}

// loop runs the jobs MM2's connector schedules: offset-syncs topic creation once, then a plan, then ACL and
// config syncs, each on its interval. Errors that may go away (unreachable clusters, timeouts) are retried
// with backoff, and the connector shows FAILED with them (naming the cluster and its address) until the job
// succeeds, then RUNNING again: MM2's scheduler only logs them, and its connector looks healthy with no task.
// An error that will not go away by itself ends the run with that error if the job has never succeeded yet,
// because an operator must fix something, and is retried afterwards the same way, because the tasks keep
// replicating meanwhile.
func (r *sourcePlanner) loop(ctx context.Context) error {
	every := func(enabled bool, intervalSeconds int64) (bool, time.Duration) {
		return enabled, time.Duration(intervalSeconds) * time.Second
	}
	var jobs []*plannerJob
	if r.cfg.EmitOffsetSyncsEnabled {
		jobs = append(jobs, &plannerJob{what: "create the offset-syncs topic", run: r.createOffsetSyncsTopic})
	}
	plan := &plannerJob{what: "plan source partitions", run: r.refreshPlan}
	if on, interval := every(r.cfg.RefreshTopicsEnabled, r.cfg.RefreshTopicsIntervalSeconds); on {
		plan.interval = interval
	}
	jobs = append(jobs, plan)
	if on, interval := every(r.cfg.SyncTopicACLsEnabled, r.cfg.SyncTopicACLsIntervalSeconds); on {
		jobs = append(jobs, &plannerJob{what: "sync topic ACLs", run: r.syncTopicACLs, interval: interval, afterPlan: true})
	}
	if on, interval := every(r.cfg.SyncTopicConfigsEnabled, r.cfg.SyncTopicConfigsIntervalSeconds); on {
		jobs = append(jobs, &plannerJob{what: "sync topic configs", run: r.syncTopicConfigs, interval: interval, afterPlan: true})
	}
	if r.balancer != nil {
		jobs = append(jobs, &plannerJob{what: "balance the tasks' load", run: r.balance, interval: balanceInterval, afterPlan: true})
	}
	start := time.Now()
	for _, j := range jobs {
		if !j.afterPlan {
			j.next = start
		}
	}
	status := connectors.NewFailingJobs(r.env, r.cfg.Config, r.name)
	if err := r.reportPreviousConfig(ctx, status); err != nil {
		return err
	}

	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		for _, j := range jobs {
			if j.next.IsZero() || time.Now().Before(j.next) {
				continue
			}
			began := time.Now()
			err := j.run(ctx)
			if ctx.Err() != nil {
				return nil
			}
			if err != nil {
				if stop := r.jobFailed(j, err); stop != nil {
					return stop
				}
				status.Fail(j.what, err)
				if err := r.showStatus(ctx, status); err != nil {
					return err
				}
				continue
			}
			status.OK(j.what)
			if j == plan && !j.succeeded {
				for _, other := range jobs {
					if other.afterPlan {
						other.next = time.Now()
					}
				}
			}
			j.succeeded, j.failures = true, 0
			if j.interval > 0 {
				j.next = began.Add(j.interval)
			} else {
				j.next = time.Time{}
			}
		}
		if err := r.showStatus(ctx, status); err != nil {
			return err
		}

		var next time.Time
		for _, j := range jobs {
			if !j.next.IsZero() && (next.IsZero() || j.next.Before(next)) {
				next = j.next
			}
		}
		if next.IsZero() {
			<-ctx.Done()
			return nil
		}
		timer.Reset(time.Until(next))
		select {
		case <-ctx.Done():
			return nil
		case <-timer.C:
		}
	}
}

// reportPreviousConfig shows, until the first plan with this config, that the tasks still run the task configs of
// an earlier one: a RUNNING status must not hide it for the admin timeout a failing plan may take.
func (r *sourcePlanner) reportPreviousConfig(ctx context.Context, status *connectors.FailingJobs) error {
	previous, err := status.TasksOnPreviousConfig(ctx)
	if err == nil && previous {
		n := kmtype.Notice{Kind: connectors.NoticeTasksOnPreviousConfig, Message: connectors.TasksOnPreviousConfigPending}
		if err = r.env.Report(ctx, []kmtype.Notice{n}); err == nil {
			r.reported = n.Message
		}
	}
	return r.statusNotWritten(ctx, err, "could not tell whether the tasks run the previous config's task configs")
}

// showStatus shows the jobs that fail in the connector's status (FAILED while one does), and when none is left,
// RUNNING with the notices it showed before. A failure to write the status is retried after the next job.
func (r *sourcePlanner) showStatus(ctx context.Context, status *connectors.FailingJobs) error {
	recovered, err := status.Show(ctx, r.reported)
	if err == nil && recovered {
		r.reported = ""
		err = r.reportProblems(ctx, r.topics)
	}
	return r.statusNotWritten(ctx, err, "could not show the connector's jobs in its status; will retry")
}

// statusNotWritten returns err if it ends the run (fenced), and logs it otherwise: a status that could not be
// written is written again later, and the jobs go on meanwhile.
func (r *sourcePlanner) statusNotWritten(ctx context.Context, err error, msg string) error {
	switch {
	case err == nil || ctx.Err() != nil:
		return nil
	case errors.Is(err, kmtype.ErrFenced):
		return err
	}
	r.log.Warn(msg, "error", err)
	return nil
}

// jobFailed schedules a failed job's retry, and returns the error that ends the run if the failure is one
// that retrying will not fix.
func (r *sourcePlanner) jobFailed(j *plannerJob, err error) error {
	var stop *plannerStopError
	switch {
	case errors.Is(err, kmtype.ErrFenced):
		return err
	case errors.As(err, &stop):
		return stop.err
	case !j.succeeded && !plannerTransient(err):
		return err
	}
	j.failures++
	delay := min(connectors.JobRetryMin<<min(j.failures-1, 6), connectors.JobRetryMax)
	j.next = time.Now().Add(delay)
	level := slog.LevelWarn
	if !plannerTransient(err) {
		level = slog.LevelError
	}
	r.log.Log(context.Background(), level, "connector job failed; will retry", "job", j.what, "failures", j.failures,
		"retry_in", delay, "error", err)
	return nil
}

// createOffsetSyncsTopic creates the compacted single-partition topic the tasks write offset syncs to: on
// the source cluster named after the target (the default, offset-syncs.topic.location=source) or on the
// target named after the source. Like MirrorUtils it takes an authorization failure to mean that someone
// else manages the topic.
func (r *sourcePlanner) createOffsetSyncsTopic(ctx context.Context) error {
	topic, cluster := r.policy.OffsetSyncsTopic(r.targetAlias), r.sourceAlias
	if r.cfg.OffsetSyncsTopicLocation == mirrorconfig.OffsetSyncsLocationTarget {
		topic, cluster = r.policy.OffsetSyncsTopic(r.sourceAlias), r.targetAlias
	}
	admin, err := r.newAdmin(clientconfig.OffsetSyncsAdmin)
	if err != nil {
		return err
	}
	defer admin.Close()
	err = connectors.CreateCompactedTopic(ctx, admin, topic, int(r.cfg.OffsetSyncsTopicReplicationFactor))
	if kafka.IsAuthorization(err) {
		r.log.Warn("not allowed to create the offset-syncs topic; assuming it exists", "topic", topic, "cluster", cluster, "error", err)
		return nil
	}
	if err != nil {
		return fmt.Errorf("create the offset-syncs topic on cluster %s: %w", cluster, err)
	}
	return nil
}

// plannerTransient reports whether err may go away by itself: Kafka's retriable errors and timeouts.
func plannerTransient(err error) bool {
	var later *plannerRetryError
	return kafka.IsRetriable(err) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &later)
}

// plannerStopError ends the connector's run whenever it happens.
type plannerStopError struct{ err error }

func (e *plannerStopError) Error() string { return e.err.Error() }
func (e *plannerStopError) Unwrap() error { return e.err }

func plannerStop(err error) error { return &plannerStopError{err: err} }

// plannerRetryError is retried with backoff whatever its cause, even before its job first succeeded: a
// failure to store task configs says nothing about the connector's config.
type plannerRetryError struct{ err error }

func (e *plannerRetryError) Error() string { return e.err.Error() }
func (e *plannerRetryError) Unwrap() error { return e.err }

func plannerRetry(err error) error {
	if errors.Is(err, kmtype.ErrFenced) {
		return err
	}
	return &plannerRetryError{err: err}
}
