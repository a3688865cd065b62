package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/kmtype"
)

// PartitionStopped is the status of a partition nobody replicates: its task stopped, or its connector is
// STOPPED.
const PartitionStopped = "stop"

// RefreshPartitionEnds records what the run holding a STOPPED connector's unit (claim) has just learned of the
// partitions whose stats the stop kept: the position follows the committed offset (the stopping tasks commit
// after their last report, and offsets may be altered while stopped); the end only grows (a smaller one belongs
// to a topic re-created under the same name, which is not the one the stats describe); the lag follows them (in
// seconds: the oldest unreplicated record ages with the clock; one first seen now is 0 s old); a row whose end
// was seen is fresh again. ErrFenced once the claim no longer holds the unit.
func (s *Store) RefreshPartitionEnds(ctx context.Context, c Claim, ends []kmtype.PartitionEnd) error {
	if len(ends) == 0 {
		return nil
	}
	topics, parts := make([]string, len(ends)), make([]int32, len(ends))
	nexts, offs := make([]int64, len(ends)), make([]int64, len(ends))
	for i, e := range ends {
		topics[i], parts[i], nexts[i], offs[i] = e.Topic, e.Partition, e.Next, e.End
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `
			UPDATE partition_stats s
			SET replicated_offset = v.n, end_offset = v.e,
			    lag_records = CASE WHEN v.e IS NULL THEN NULL ELSE GREATEST(v.e - v.n, 0) END,
			    lag_seconds = CASE
			        WHEN NOT v.seen THEN s.lag_seconds
			        WHEN v.e <= v.n THEN 0
			        WHEN s.lag_records > 0 AND s.lag_seconds IS NOT NULL
			            THEN s.lag_seconds + GREATEST(EXTRACT(EPOCH FROM now() - s.updated_at)::float8, 0)
			        ELSE 0 END,
			    status = $6, updated_at = CASE WHEN v.seen THEN now() ELSE s.updated_at END
			FROM (SELECT k.topic, k.partition,
			          CASE WHEN u.n >= 0 THEN u.n ELSE k.replicated_offset END AS n,
			          CASE WHEN u.e >= 0 THEN GREATEST(COALESCE(k.end_offset, 0), u.e) ELSE k.end_offset END AS e,
			          u.e >= 0 AS seen
			      FROM partition_stats k
			      JOIN unnest($2::text[], $3::int[], $4::bigint[], $5::bigint[]) AS u(t, p, n, e)
			        ON k.connector_name = $1 AND k.topic = u.t AND k.partition = u.p) AS v
			WHERE s.connector_name = $1 AND s.topic = v.topic AND s.partition = v.partition`,
			c.Connector, topics, parts, nexts, offs, PartitionStopped)
		return err
	})
	if err != nil {
		return fmt.Errorf("refresh the end offsets of %s: %w", c.Connector, err)
	}
	return nil
}

// PutPartitionStats stores a task's partition stats for the run holding claim; ErrFenced once it no longer
// holds its unit. A run of a superseded task set (started with an older task generation than the connector's,
// and about to be restarted with its new config) stores nothing: it may still hold partitions the new plan
// dropped or gave to another task, and its last report, the final one as it stops, must not bring their rows
// back after RetainPartitionStats removed them. Only the runs of a connector being STOPPED (no task set left)
// store theirs: the stop keeps the rows (StopTaskSet), and their last report is the most a deletion while the
// connector is stopped can be judged on; the plan that resumes it retains what it needs. Such a report may come
// after the STOPPED connector's run has looked at the source (RefreshPartitionEnds) and recorded the committed
// position: it then moves neither the end nor the position back, since it was sampled before both.
func (s *Store) PutPartitionStats(ctx context.Context, c Claim, worker string, stats []kmtype.PartitionStat) error {
	if len(stats) == 0 {
		return nil
	}
	n := len(stats)
	topics, remotes, statuses := make([]string, n), make([]string, n), make([]string, n)
	parts := make([]int32, n)
	repl := make([]int64, n)
	ends, lags := make([]*int64, n), make([]*int64, n)
	lagSecs := make([]*float64, n)
	rps, bps := make([]float64, n), make([]float64, n)
	last := make([]*time.Time, n)
	for i, st := range stats {
		topics[i], parts[i], remotes[i], repl[i] = st.Topic, st.Partition, st.RemoteTopic, st.ReplicatedOffset
		ends[i], lags[i], lagSecs[i], rps[i], bps[i], last[i], statuses[i] = st.EndOffset, st.LagRecords, st.LagSeconds,
			st.RecordsPerSecond, st.BytesPerSecond, st.LastReplicatedAt, st.Status
		if statuses[i] == "" {
			statuses[i] = "ok"
		}
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		var stopping bool
		if err := tx.QueryRow(ctx, `
			SELECT c.target_state = $2 AND NOT EXISTS (SELECT 1 FROM task_configs t WHERE t.connector_name = c.name)
			FROM connectors c WHERE c.name = $1`, c.Connector, TargetStopped).Scan(&stopping); err != nil {
			return err
		}
		update := reportSQL
		if stopping {
			update = stoppingReportSQL
		}
		_, err := tx.Exec(ctx, `
			INSERT INTO partition_stats (connector_name, topic, partition, remote_topic, task_id, worker_id, replicated_offset,
				end_offset, lag_records, lag_seconds, records_per_second, bytes_per_second, last_replicated_at, status, updated_at)
			SELECT $1, t, p, r, $2, $3, o, e, l, ls, rps, bps, lr, st, now()
			FROM unnest($4::text[], $5::int[], $6::text[], $7::bigint[], $8::bigint[], $9::bigint[], $10::float8[], $11::float8[],
				$12::float8[], $13::timestamptz[], $14::text[]) AS u(t, p, r, o, e, l, ls, rps, bps, lr, st)
			WHERE EXISTS (SELECT 1 FROM connectors c JOIN assignments a ON a.connector_name = c.name
				WHERE c.name = $1 AND a.task_id = $2 AND a.run_epoch = $15 AND (a.run_generation >= c.task_generation
					OR $16::bool))
			ON CONFLICT (connector_name, topic, partition) DO UPDATE
			SET remote_topic = EXCLUDED.remote_topic, task_id = EXCLUDED.task_id, worker_id = EXCLUDED.worker_id,
			    records_per_second = EXCLUDED.records_per_second, bytes_per_second = EXCLUDED.bytes_per_second,
			    last_replicated_at = EXCLUDED.last_replicated_at, status = EXCLUDED.status, updated_at = now(), `+update,
			c.Connector, c.Task, worker, topics, parts, remotes, repl, ends, lags, lagSecs, rps, bps, last, statuses, c.Epoch, stopping)
		return err
	})
	if err != nil {
		return fmt.Errorf("store partition stats of %s-%d: %w", c.Connector, c.Task, err)
	}
	return nil
}

// reportSQL is how a task's report updates its partition's row: it says where the partition stands now.
const reportSQL = `replicated_offset = EXCLUDED.replicated_offset, end_offset = EXCLUDED.end_offset,
	lag_records = EXCLUDED.lag_records, lag_seconds = EXCLUDED.lag_seconds`

// stoppingReportSQL is how the last report of a task of a connector being STOPPED updates a kept row: the
// position and the end only grow (GREATEST ignores NULL), and the lag follows them.
const stoppingReportSQL = `replicated_offset = GREATEST(partition_stats.replicated_offset, EXCLUDED.replicated_offset),
	end_offset = GREATEST(partition_stats.end_offset, EXCLUDED.end_offset),
	lag_records = CASE WHEN GREATEST(partition_stats.end_offset, EXCLUDED.end_offset) IS NULL THEN NULL
		ELSE GREATEST(GREATEST(partition_stats.end_offset, EXCLUDED.end_offset)
			- GREATEST(partition_stats.replicated_offset, EXCLUDED.replicated_offset), 0) END,
	lag_seconds = CASE
		WHEN GREATEST(partition_stats.end_offset, EXCLUDED.end_offset)
			<= GREATEST(partition_stats.replicated_offset, EXCLUDED.replicated_offset) THEN 0
		ELSE GREATEST(partition_stats.lag_seconds, EXCLUDED.lag_seconds) END`

// ConnectorPartitionStats returns what the connector's tasks last reported of their partitions, by topic and
// partition; ErrNotFound if the connector does not exist.
func (s *Store) ConnectorPartitionStats(ctx context.Context, connector string) ([]kmtype.PartitionStat, error) {
	if _, err := s.GetConnector(ctx, connector); err != nil {
		return nil, fmt.Errorf("read partition stats of %q: %w", connector, err)
	}
	rows, err := s.pool.Query(ctx, `
		SELECT topic, partition, remote_topic, task_id, worker_id, replicated_offset, end_offset, lag_records, lag_seconds,
			records_per_second, bytes_per_second, last_replicated_at, status, updated_at
		FROM partition_stats WHERE connector_name = $1 ORDER BY topic, partition`, connector)
	if err != nil {
		return nil, fmt.Errorf("read partition stats of %q: %w", connector, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kmtype.PartitionStat, error) {
		var st kmtype.PartitionStat
		return st, r.Scan(&st.Topic, &st.Partition, &st.RemoteTopic, &st.Task, &st.WorkerID, &st.ReplicatedOffset, &st.EndOffset,
			&st.LagRecords, &st.LagSeconds, &st.RecordsPerSecond, &st.BytesPerSecond, &st.LastReplicatedAt, &st.Status, &st.UpdatedAt)
	})
	if err != nil {
		return nil, fmt.Errorf("read partition stats of %q: %w", connector, err)
	}
	return out, nil
}

// RetainPartitionStats deletes the connector's partition stats that plan does not account for: partitions no
// task replicates any more (topic deleted, no longer selected) and partitions the plan gives to another task
// than the one whose report the row is (the new owner has not reported yet). A row nobody was replicating
// (status stop: kept by a stop, or left by a run as it ended) whose partition the plan gives to another task goes
// to that task instead: it is what the new owner judges a topic deleted or re-created meanwhile on, and a
// connector resumed after a stop deals its partitions afresh, often to other tasks. The connector instance
// holding claim calls it after publishing its task set; ErrFenced once it no longer holds its unit. It returns
// how many rows went.
func (s *Store) RetainPartitionStats(ctx context.Context, c Claim, plan []kmtype.PartitionOwner) (int64, error) {
	topics, parts, owners := make([]string, len(plan)), make([]int32, len(plan)), make([]int32, len(plan))
	for i, o := range plan {
		topics[i], parts[i], owners[i] = o.Topic, o.Partition, int32(o.Task)
	}
	var deleted int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := holdClaim(ctx, tx, c); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `
			UPDATE partition_stats ps SET task_id = u.k
			FROM unnest($2::text[], $3::int[], $4::int[]) AS u(t, p, k)
			WHERE ps.connector_name = $1 AND ps.status = $5 AND u.t = ps.topic AND u.p = ps.partition AND u.k <> ps.task_id`,
			c.Connector, topics, parts, owners, PartitionStopped); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			DELETE FROM partition_stats ps WHERE ps.connector_name = $1 AND NOT EXISTS (
				SELECT 1 FROM unnest($2::text[], $3::int[], $4::int[]) AS u(t, p, k)
				WHERE u.t = ps.topic AND u.p = ps.partition AND u.k = ps.task_id)`,
			c.Connector, topics, parts, owners)
		deleted = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("drop stale partition stats of %q: %w", c.Connector, err)
	}
	return deleted, nil
}

// PartitionRates returns the byte rate each partition of the connector last reported, with the report's age.
func (s *Store) PartitionRates(ctx context.Context, connector string) ([]kmtype.PartitionRate, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT topic, partition, task_id, bytes_per_second, extract(epoch FROM now() - updated_at)
		FROM partition_stats WHERE connector_name = $1`, connector)
	if err != nil {
		return nil, fmt.Errorf("read partition rates of %q: %w", connector, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (kmtype.PartitionRate, error) {
		var pr kmtype.PartitionRate
		var age float64
		err := r.Scan(&pr.Topic, &pr.Partition, &pr.Task, &pr.BytesPerSecond, &age)
		pr.Age = time.Duration(age * float64(time.Second))
		return pr, err
	})
	if err != nil {
		return nil, fmt.Errorf("read partition rates of %q: %w", connector, err)
	}
	return out, nil
}

// TaskRates returns every task's byte rate: the sum of what it reported for its partitions within fresh, by
// unit. Tasks without a fresh report are absent.
func (s *Store) TaskRates(ctx context.Context, fresh time.Duration) (map[Unit]float64, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT connector_name, task_id, sum(bytes_per_second) FROM partition_stats
		WHERE updated_at > now() - make_interval(secs => $1) GROUP BY 1, 2`, fresh.Seconds())
	if err != nil {
		return nil, fmt.Errorf("read task rates: %w", err)
	}
	out := map[Unit]float64{}
	var u Unit
	var rate float64
	_, err = pgx.ForEachRow(rows, []any{&u.Connector, &u.Task, &rate}, func() error {
		out[u] = rate
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read task rates: %w", err)
	}
	return out, nil
}
