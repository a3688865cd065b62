// Package heartbeat is MirrorHeartbeatConnector and MirrorHeartbeatTask: a heartbeat record written to the
// target cluster every emit.heartbeats.interval.seconds.
package heartbeat

import (
	"log/slog"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/tasks"
)

// Plugin is MirrorHeartbeatConnector for the connectors registry.
type Plugin struct{}

var _ connectors.Plugin = Plugin{}

// Class implements connectors.Plugin.
func (Plugin) Class() string { return mirrorconfig.HeartbeatConnectorClass }

// TaskClass implements connectors.Plugin.
func (Plugin) TaskClass() string { return connectors.HeartbeatTaskClass }

// NewConnector implements connectors.Plugin.
func (Plugin) NewConnector(name string, cfg connectors.Config, log *slog.Logger) tasks.Connector {
	return &heartbeatConnector{name: name, cfg: newConfig(cfg), log: log}
}

// NewTask implements connectors.Plugin.
func (Plugin) NewTask(id tasks.TaskID, cfg connectors.Config, log *slog.Logger) tasks.Task {
	return &heartbeatTask{id: id, cfg: newConfig(cfg), log: log}
}
