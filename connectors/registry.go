package connectors

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// Task classes, as Connect records them in task configs (task.class).
const (
	SourceTaskClass     = "org.apache.kafka.connect.mirror.MirrorSourceTask"
	CheckpointTaskClass = "org.apache.kafka.connect.mirror.MirrorCheckpointTask"
	HeartbeatTaskClass  = "org.apache.kafka.connect.mirror.MirrorHeartbeatTask"
	TaskClassKey        = "task.class"
)

// A Plugin is one of MM2's connectors: it makes the connector and its tasks from configs the registry parsed.
type Plugin interface {
	// Class is the connector class it implements (connector.class); TaskClass is its tasks' task.class.
	Class() string
	TaskClass() string
	NewConnector(name string, cfg Config, log *slog.Logger) tasks.Connector
	NewTask(id tasks.TaskID, cfg Config, log *slog.Logger) tasks.Task
}

// An OffsetsPlugin is a Plugin whose connectors may keep source offsets outside PostgreSQL too; the registry
// answers tasks.OffsetsWriter through it.
type OffsetsPlugin interface {
	Plugin
	// WritesOffsets tells whether its connectors keep offsets outside PostgreSQL on this worker.
	WritesOffsets() bool
	// WriteOffsets writes a connector's altered (or, with reset, cleared) offsets there.
	WriteOffsets(ctx context.Context, env tasks.OffsetsEnv, connector string, cfg Config, offsets []kmtype.Offset, reset bool) error
}

// A StoppedPlugin is a Plugin whose connectors keep looking at their source while STOPPED; the registry
// answers tasks.StoppedWatcher through it.
type StoppedPlugin interface {
	Plugin
	WatchStopped(ctx context.Context, env tasks.StoppedEnv, connector string, cfg Config) error
}

// Registry creates MM2 connectors and tasks for the runtime, each through the plugin of its class.
type Registry struct {
	logger  func(name string) *slog.Logger
	clients clientconfig.Options
	byClass map[string]Plugin // by connector class
	byTask  map[string]Plugin // by task class
}

// NewRegistry returns a Registry of plugins whose connectors and tasks log through loggers named by logger.
// clients are the rules every client setting follows (allowed files, config providers): the same the REST API
// validates with.
func NewRegistry(logger func(name string) *slog.Logger, clients clientconfig.Options, plugins ...Plugin) *Registry {
	r := &Registry{logger: logger, clients: clients, byClass: map[string]Plugin{}, byTask: map[string]Plugin{}}
	for _, p := range plugins {
		r.byClass[p.Class()] = p
		r.byTask[p.TaskClass()] = p
	}
	return r
}

var (
	_ tasks.Registry       = (*Registry)(nil)
	_ tasks.OffsetsWriter  = (*Registry)(nil)
	_ tasks.StoppedWatcher = (*Registry)(nil)
)

// NewConnector returns the connector instance for config's connector.class.
func (r *Registry) NewConnector(name string, config map[string]string) (tasks.Connector, error) {
	p, ok := mirrorconfig.LookupPlugin(config[mirrorconfig.ConnectorClassConfig])
	if !ok {
		return nil, fmt.Errorf("unknown connector class %q", config[mirrorconfig.ConnectorClassConfig])
	}
	cfg, err := ParseConfig(p, config, r.clients)
	if err != nil {
		return nil, err
	}
	plugin, ok := r.byClass[p.Class]
	if !ok {
		return nil, fmt.Errorf("connector class %s is not implemented yet", p.Class)
	}
	return plugin.NewConnector(name, cfg, r.logger("kmirror.connectors").With("connector", name)), nil
}

// NewTask returns the task for a task config published by one of this registry's connectors.
func (r *Registry) NewTask(id tasks.TaskID, config map[string]string) (tasks.Task, error) {
	class := config[TaskClassKey]
	plugin, ok := r.byTask[class]
	if !ok {
		return nil, fmt.Errorf("unknown task class %q in the config of task %s", class, id)
	}
	p, _ := mirrorconfig.LookupPlugin(plugin.Class())
	cfg, err := ParseConfig(p, config, r.clients)
	if err != nil {
		return nil, err
	}
	return plugin.NewTask(id, cfg, r.logger("kmirror.connectors").With("task", id.String())), nil
}

// WritesOffsets implements tasks.OffsetsWriter: whether config's connector keeps its offsets outside
// PostgreSQL too (a MirrorSourceConnector on a worker with exactly-once source support).
func (r *Registry) WritesOffsets(config map[string]string) bool {
	w, ok := r.offsetsPlugin(config)
	return ok && w.WritesOffsets()
}

// WriteOffsets implements tasks.OffsetsWriter: a connector's altered or reset offsets are written where it
// keeps them outside PostgreSQL, if it does.
func (r *Registry) WriteOffsets(ctx context.Context, env tasks.OffsetsEnv, connector string, config map[string]string, offsets []kmtype.Offset, reset bool) error {
	w, ok := r.offsetsPlugin(config)
	if !ok || !w.WritesOffsets() {
		return nil
	}
	p, _ := mirrorconfig.LookupPlugin(w.Class())
	cfg, err := ParseConfig(p, config, r.clients)
	if err != nil {
		return err
	}
	return w.WriteOffsets(ctx, env, connector, cfg, offsets, reset)
}

func (r *Registry) offsetsPlugin(config map[string]string) (OffsetsPlugin, bool) {
	p, ok := mirrorconfig.LookupPlugin(config[mirrorconfig.ConnectorClassConfig])
	if !ok {
		return nil, false
	}
	w, ok := r.byClass[p.Class].(OffsetsPlugin)
	return w, ok
}

// WatchStopped implements tasks.StoppedWatcher through the plugin of config's class, if it watches at all.
func (r *Registry) WatchStopped(ctx context.Context, env tasks.StoppedEnv, connector string, config map[string]string) error {
	p, ok := mirrorconfig.LookupPlugin(config[mirrorconfig.ConnectorClassConfig])
	if !ok {
		return nil
	}
	w, ok := r.byClass[p.Class].(StoppedPlugin)
	if !ok {
		return nil
	}
	cfg, err := ParseConfig(p, config, r.clients)
	if err != nil {
		return nil // a config that does not parse runs nothing, so there is nothing to judge either
	}
	return w.WatchStopped(ctx, env, connector, cfg)
}
