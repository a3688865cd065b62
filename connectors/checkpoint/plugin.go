// Package checkpoint is MirrorCheckpointConnector and MirrorCheckpointTask: consumer group offsets on the
// source cluster translated through the offset syncs and written as checkpoints (and, when enabled, as the
// groups' offsets) on the target.
package checkpoint

import (
	"log/slog"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// Plugin is MirrorCheckpointConnector for the connectors registry.
type Plugin struct {
	metrics *metrics.Registry // nil: the tasks report no metrics
}

var _ connectors.Plugin = (*Plugin)(nil)

// New returns the checkpoint plugin, whose tasks report to m (nil for none).
func New(m *metrics.Registry) *Plugin { return &Plugin{metrics: m} }

// Class implements connectors.Plugin.
func (p *Plugin) Class() string { return mirrorconfig.CheckpointConnectorClass }

// TaskClass implements connectors.Plugin.
func (p *Plugin) TaskClass() string { return connectors.CheckpointTaskClass }

// NewConnector implements connectors.Plugin.
func (p *Plugin) NewConnector(name string, cfg connectors.Config, log *slog.Logger) tasks.Connector {
	return &checkpointConnector{name: name, cfg: newConfig(cfg), log: log}
}

// NewTask implements connectors.Plugin.
func (p *Plugin) NewTask(id tasks.TaskID, cfg connectors.Config, log *slog.Logger) tasks.Task {
	return &checkpointTask{id: id, cfg: newConfig(cfg), log: log, metrics: p.metrics}
}
