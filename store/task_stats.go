package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// TaskStat is what a source task last measured of its pipeline.
type TaskStat struct {
	Task      int    // set by the store from the claim
	WorkerID  string // set by the runtime
	Pipeline  PipelineStat
	UpdatedAt time.Time // read only
}

// PipelineStat is one task's pipeline over its last measuring interval: the figures capacity advice stands on
// (docs/partitions.md). Stored as JSON, so that a newer worker may add figures an older one ignores.
type PipelineStat struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	// The poll loop's wall time, split: waiting for source records (empty or slow polls), waiting for the
	// target (a full producer queue, no acknowledgement, no lease), and the rest, handling records.
	WaitSourceFraction float64 `json:"wait_source_fraction"`
	WaitTargetFraction float64 `json:"wait_target_fraction"`
	BusyFraction       float64 `json:"busy_fraction"`
	// What librdkafka's statistics said of the replication clients; nil before their first statistics.
	Producer *ClientFigures `json:"producer,omitempty"`
	Consumer *ClientFigures `json:"consumer,omitempty"`
	// The replication producer's settings, as librdkafka runs them.
	BatchSizeBytes    int64   `json:"batch_size_bytes"`
	QueueMaxBytes     int64   `json:"queue_max_bytes"` // queue.buffering.max.kbytes (Java's buffer.memory)
	LingerMs          float64 `json:"linger_ms"`
	CompressionType   string  `json:"compression_type"`
	MaxInFlight       int     `json:"max_in_flight"`
	FetchMaxBytes     int64   `json:"fetch_max_bytes"`
	PartitionMaxBytes int64   `json:"max_partition_fetch_bytes"`
	// The CPU the task's worker process used over the interval, in cores, and the cores it may use.
	WorkerCPUCores float64 `json:"worker_cpu_cores"`
	WorkerCPUs     int     `json:"worker_cpus"`
}

// ClientFigures summarise a librdkafka client's last statistics document.
type ClientFigures struct {
	BatchAvgBytes    float64 `json:"batch_avg_bytes,omitempty"`
	BatchAvgRecords  float64 `json:"batch_avg_records,omitempty"`
	Batches          int64   `json:"batches,omitempty"`
	RTTAvgMs         float64 `json:"rtt_avg_ms"`
	ThrottleAvgMs    float64 `json:"throttle_avg_ms"`
	InFlightRequests int64   `json:"in_flight_requests"`
	InFlightMax      int64   `json:"in_flight_max"`
}

// PutTaskStat stores a task's pipeline figures for the run holding claim; ErrFenced once it no longer holds its
// unit. A run of a superseded task set stores nothing, as in PutPartitionStats: its task may be gone from the new
// set.
func (s *Store) PutTaskStat(ctx context.Context, c Claim, worker string, st PipelineStat) error {
	doc, err := json.Marshal(st)
	if err != nil {
		return fmt.Errorf("store task stats of %s-%d: %w", c.Connector, c.Task, err)
	}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO task_stats (connector_name, task_id, worker_id, pipeline, updated_at)
			SELECT $1, $2, $3, $4, now()
			WHERE EXISTS (SELECT 1 FROM connectors c JOIN assignments a ON a.connector_name = c.name
				WHERE c.name = $1 AND a.task_id = $2 AND a.run_epoch = $5 AND a.run_generation >= c.task_generation)
			ON CONFLICT (connector_name, task_id) DO UPDATE
			SET worker_id = EXCLUDED.worker_id, pipeline = EXCLUDED.pipeline, updated_at = now()`,
			c.Connector, c.Task, worker, doc, c.Epoch)
		return err
	})
	if err != nil {
		return fmt.Errorf("store task stats of %s-%d: %w", c.Connector, c.Task, err)
	}
	return nil
}

// ConnectorTaskStats returns what the connector's tasks last measured of their pipelines, by task; ErrNotFound
// if the connector does not exist. Rows of tasks above the current task count may remain from a larger task
// set: callers match them against the task configs.
func (s *Store) ConnectorTaskStats(ctx context.Context, connector string) ([]TaskStat, error) {
	if _, err := s.GetConnector(ctx, connector); err != nil {
		return nil, fmt.Errorf("read task stats of %q: %w", connector, err)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT task_id, worker_id, pipeline, updated_at FROM task_stats WHERE connector_name = $1 ORDER BY task_id`, connector)
	if err != nil {
		return nil, fmt.Errorf("read task stats of %q: %w", connector, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (TaskStat, error) {
		var st TaskStat
		var doc []byte
		if err := r.Scan(&st.Task, &st.WorkerID, &doc, &st.UpdatedAt); err != nil {
			return st, err
		}
		return st, json.Unmarshal(doc, &st.Pipeline)
	})
	if err != nil {
		return nil, fmt.Errorf("read task stats of %q: %w", connector, err)
	}
	return out, nil
}
