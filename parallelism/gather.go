// Package parallelism judges how a MirrorSourceConnector's work spreads: where each source partition stands,
// which task and worker replicate it, and what that says about tasks.max, the workers and each task's
// pipeline (docs/partitions.md). GET /connectors/{c}/partitions shows the Report; the metrics show its
// verdicts as gauges. It reads the store and decides; it starts, stops and changes nothing.
package parallelism

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/store"
)

// timeLayout is how instants appear in a Report: the REST API's (UTC, milliseconds).
const timeLayout = "2006-01-02T15:04:05.000Z"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// IsMirrorSource says whether the connector's stored connector.class names a MirrorSourceConnector, by any of
// the names Connect accepts: only that connector replicates partitions.
func IsMirrorSource(c store.Connector) bool {
	p, ok := mirrorconfig.LookupPlugin(c.Config["connector.class"])
	return ok && p.Class == mirrorconfig.SourceConnectorClass
}

// Gather reads what the store says about the connector's partitions, tasks and the cluster. A connector
// deleted meanwhile is store.ErrNotFound.
func Gather(ctx context.Context, st *store.Store, c store.Connector) (Facts, error) {
	stats, err := st.ConnectorPartitionStats(ctx, c.Name)
	if err != nil {
		return Facts{}, fmt.Errorf("partition stats of %s: %w", c.Name, err)
	}
	taskStats, err := st.ConnectorTaskStats(ctx, c.Name)
	if err != nil {
		return Facts{}, fmt.Errorf("task stats of %s: %w", c.Name, err)
	}
	tcs, err := st.TaskConfigs(ctx, c.Name)
	if err != nil {
		return Facts{}, fmt.Errorf("task configs of %s: %w", c.Name, err)
	}
	_, statuses, err := st.ConnectorStatus(ctx, c.Name)
	if err != nil && !errors.Is(err, store.ErrNotFound) { // no status yet: every task is UNASSIGNED
		return Facts{}, fmt.Errorf("status of %s: %w", c.Name, err)
	}
	workers, err := st.Workers(ctx)
	if err != nil {
		return Facts{}, fmt.Errorf("workers: %w", err)
	}
	return Facts{
		Name: c.Name, TasksMax: TasksMax(c.Config), Stats: stats, TaskStats: taskStats, TaskConfigs: tcs, Statuses: statuses,
		Now: databaseNow(workers), LiveWorkers: len(workers),
	}, nil
}
