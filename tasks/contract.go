package tasks

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kmirror/kmirror/store"
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
// env.SetTaskConfigs whenever the set changes.
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
	// Report keeps the connector RUNNING and shows notice as its status trace (empty clears it), for problems
	// an operator must fix while the rest goes on, such as a remote topic the target refuses to create.
	Report(ctx context.Context, notice string) error
	Logger() *slog.Logger
}

// Task is one running task. Run lasts until ctx is done — then it drains, flushes and commits what the target
// acknowledged, and returns nil — or until it fails for good, returning the error that becomes its FAILED trace.
// Transient errors are the task's to retry.
type Task interface {
	Run(ctx context.Context, env TaskEnv) error
}

// TaskEnv is what a running task may ask of the runtime.
type TaskEnv interface {
	// Running records that the task has started its work; its status becomes RUNNING.
	Running(ctx context.Context) error
	// ReadOffsets returns every stored source offset of the connector.
	ReadOffsets(ctx context.Context) ([]Offset, error)
	// CommitOffsets stores source offsets. ErrFenced means the task lost its assignment and must stop without
	// committing anything more.
	CommitOffsets(ctx context.Context, offsets []Offset) error
	// RecordTopics adds topics to the connector's active topics (GET /connectors/{c}/topics).
	RecordTopics(ctx context.Context, topics []string) error
	// Report keeps the task RUNNING and shows notice as its status trace (an empty notice clears it). Tasks use
	// it for what an operator must know while replication goes on: data lost to retention before it could be
	// replicated, a cluster that is unreachable.
	Report(ctx context.Context, notice string) error
	Logger() *slog.Logger
}

// Offset is a source offset in Connect's shape: a partition map and an offset map.
type Offset = store.Offset

// ErrFenced is returned to a connector instance or task that no longer owns its assignment.
var ErrFenced = store.ErrFenced
