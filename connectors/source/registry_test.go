package source

import (
	"log/slog"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/checkpoint"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/heartbeat"
)

// testRegistry is a worker's registry of the three MM2 connectors, without metrics, logging to log.
func testRegistry(log *slog.Logger) *connectors.Registry {
	return connectors.NewRegistry(func(string) *slog.Logger { return log }, clientconfig.Options{}, New(log, nil), checkpoint.New(nil), heartbeat.Plugin{})
}
