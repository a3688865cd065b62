package connectors

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/tasks"
)

// FailingJobs shows the failures of a connector's recurring jobs (creating an internal topic, listing topics or
// groups, syncing ACLs) in its status: FAILED with their errors, each naming the cluster and its address, for
// as long as one of them fails; RUNNING again once none does. The jobs are retried meanwhile, so the connector
// recovers without a restart. Its methods are called from the connector's Run goroutine only.
type FailingJobs struct {
	env   tasks.ConnectorEnv
	cfg   Config
	name  string
	errs  map[string]error // by job, the failure of its last run
	order []string         // jobs in the order they first failed, for a stable trace
	shown string           // what the status shows now: "" while it shows no failure
}

func NewFailingJobs(env tasks.ConnectorEnv, cfg Config, name string) *FailingJobs {
	return &FailingJobs{env: env, cfg: cfg, name: name, errs: map[string]error{}}
}

// Fail records that job failed with err.
func (f *FailingJobs) Fail(job string, err error) {
	if _, ok := f.errs[job]; !ok {
		f.order = append(f.order, job)
	}
	f.errs[job] = err
}

// OK records that job succeeded.
func (f *FailingJobs) OK(job string) {
	delete(f.errs, job)
	f.order = slices.DeleteFunc(f.order, func(j string) bool { return j == job })
}

func (f *FailingJobs) Failing() bool { return len(f.errs) > 0 }

// Show brings the status in line: FAILED with the current failures (written again when they changed, or when
// key, what else the connector last showed, changed), or RUNNING when none is left. recovered is true when it
// just went back to RUNNING: the caller shows its notices again, which Running cleared.
func (f *FailingJobs) Show(ctx context.Context, key string) (recovered bool, err error) {
	if !f.Failing() {
		if f.shown == "" {
			return false, nil
		}
		if err := f.env.Running(ctx); err != nil {
			return false, err
		}
		f.shown = ""
		f.env.Logger().Info("the connector's jobs work again; RUNNING")
		return true, nil
	}
	errs := make([]error, 0, len(f.order))
	for _, job := range f.order {
		err := f.errs[job]
		if !strings.HasPrefix(err.Error(), job) {
			err = fmt.Errorf("%s: %w", job, err)
		}
		errs = append(errs, f.cfg.clusterFailure(f.name, err))
	}
	failure := errs[0]
	if len(errs) > 1 {
		failure = errors.Join(errs...)
	}
	if previous, err := f.TasksOnPreviousConfig(ctx); err != nil {
		return false, err
	} else if previous {
		failure = &clusterError{msg: failure.Error() + "\n" + tasksOnPreviousConfig, cause: failure}
	}
	shown := failure.Error() + "\x00" + key
	if shown == f.shown {
		return false, nil
	}
	if err := f.env.Failing(ctx, failure); err != nil {
		return false, err
	}
	f.shown = shown
	return false, nil
}

// The response header of GET /connectors/{connector}/tasks (and tasks-config) that tells whether the task
// configs were planned from the connector's current config (PlannedFrom) or are those of an earlier config,
// which the tasks still run because the connector has not planned with the new one: it is starting, or it
// cannot, and its status is FAILED with the reason. Connect clients ignore the header; Connect itself shows the
// last task set it could plan, without saying so.
const (
	TaskConfigsHeader   = "Kmirror-Task-Configs"
	TaskConfigsCurrent  = "current-config"
	TaskConfigsPrevious = "previous-config"
)

// tasksOnPreviousConfig is what a failing connector's status adds when its tasks still run what an earlier config
// planned.
const tasksOnPreviousConfig = "The connector has not planned its tasks with its current config: its tasks still run the task configs of its previous config (GET /connectors/{connector}/tasks shows them, with the header " +
	TaskConfigsHeader + ": " + TaskConfigsPrevious + ")."

// NoticeTasksOnPreviousConfig is the notice of a connector that has not planned with its new config yet.
const NoticeTasksOnPreviousConfig = "tasks_on_previous_config"

// TasksOnPreviousConfigPending is its message.
const TasksOnPreviousConfigPending = "planning the tasks with the connector's new config: until that succeeds, the tasks run the task configs of its previous config (" +
	TaskConfigsHeader + ": " + TaskConfigsPrevious + ")"

func (f *FailingJobs) TasksOnPreviousConfig(ctx context.Context) (bool, error) {
	set, err := f.env.TaskConfigs(ctx)
	if err != nil {
		return false, err
	}
	for _, tc := range set {
		if !PlannedFrom(tc, f.cfg.Raw) {
			return true, nil
		}
	}
	return false, nil
}

// taskOnlyKeys are the keys MM2's connectors (and kmirror's planner: how the set was dealt, a task's last move
// by load) add to their config to make a task config.
var taskOnlyKeys = []string{TaskClassKey, mirror.TaskAssignedPartitionsConfig, mirror.TaskIndexConfig, mirror.TaskAssignedGroupsConfig,
	mirror.TaskAssignedByConfig, mirror.TaskLastMoveConfig}

// PlannedFrom tells whether taskConfig was planned from connectorConfig. A task config of MM2's connectors is
// the connector's config plus the task's own keys (task class, assigned partitions or groups, index), so one
// that differs from connectorConfig in any other key was planned from an earlier config: the connector has not
// planned with its current one (yet, or because it cannot).
func PlannedFrom(taskConfig, connectorConfig map[string]string) bool {
	for k, v := range taskConfig {
		if slices.Contains(taskOnlyKeys, k) {
			continue
		}
		if cv, ok := connectorConfig[k]; !ok || cv != v {
			return false
		}
	}
	for k := range connectorConfig {
		if _, ok := taskConfig[k]; !ok && !slices.Contains(taskOnlyKeys, k) {
			return false
		}
	}
	return true
}

// clusterError is a connector job's failure with the clusters it names and their addresses. When an address
// came from a config provider, the resolved servers are replaced by the reference in the message, and the
// causes are not exposed (the trace lists them): an error of the client may quote what it connected to.
type clusterError struct {
	msg   string
	cause error // nil when hidden
}

func (e *clusterError) Error() string { return e.msg }
func (e *clusterError) Unwrap() error { return e.cause }

// clusterFailure adds to err, for each cluster its message names ("source cluster A", "cluster A"), the
// bootstrap servers the connector's admin clients use there, as the operator wrote them.
func (c Config) clusterFailure(connectorName string, err error) error {
	msg := err.Error()
	out := &clusterError{msg: msg, cause: err}
	var where []string
	for _, cl := range []struct {
		alias string
		role  clientconfig.Role
	}{{c.SourceAlias(), clientconfig.SourceAdmin}, {c.TargetAlias(), clientconfig.TargetAdmin}} {
		if cl.alias == "" || !strings.Contains(msg, "cluster "+cl.alias) {
			continue
		}
		written := strings.TrimSpace(clientconfig.Resolve(cl.role, c.Raw, c.Def.Has)["bootstrap.servers"])
		if written == "" {
			continue
		}
		where = append(where, fmt.Sprintf("cluster %s at bootstrap.servers=%s", cl.alias, written))
		if !configprovider.HasReference(written) {
			continue
		}
		out.cause = nil
		if props, perr := c.ClientProps(cl.role, connectorName, -1); perr == nil {
			for _, server := range strings.Split(props["bootstrap.servers"], ",") {
				if server = strings.TrimSpace(server); len(server) >= 4 {
					out.msg = strings.ReplaceAll(out.msg, server, written)
				}
			}
		}
	}
	if len(where) > 0 {
		out.msg += " (" + strings.Join(where, "; ") + ")"
	}
	return out
}
