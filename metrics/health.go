package metrics

import (
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// healthGauges are the series alerts read for what no per-partition series shows: whether this worker reaches
// PostgreSQL, and when each checkpoint task last finished a round.
type healthGauges struct {
	database   *prometheus.GaugeVec // no labels; a Vec so that it is absent until set
	cpRound    *prometheus.GaugeVec
	cpInterval *prometheus.GaugeVec
}

func newHealthGauges() healthGauges {
	return healthGauges{
		database: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kmirror_database_up",
			Help: "1 while this worker's last heartbeat to PostgreSQL succeeded, 0 after one failed; absent until the first heartbeat.",
		}, nil),
		cpRound: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kmirror_checkpoint_round_timestamp_seconds",
			Help: "Unix time of the checkpoint task's last round that read, translated and emitted without error (its start until the first).",
		}, []string{"connector", "task"}),
		cpInterval: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "kmirror_checkpoint_interval_seconds",
			Help: "The checkpoint task's round interval (emit.checkpoints.interval.seconds).",
		}, []string{"connector", "task"}),
	}
}

func (h healthGauges) collectors() []prometheus.Collector {
	return []prometheus.Collector{h.database, h.cpRound, h.cpInterval}
}

// Database records whether this worker's last heartbeat reached PostgreSQL. It implements tasks.Observer.
func (r *Registry) Database(reachable bool) {
	v := 0.0
	if reachable {
		v = 1
	}
	r.health.database.WithLabelValues().Set(v)
}

// CheckpointRound records that a checkpoint task's round finished at `at` (or that its run started then),
// with the interval its rounds run at, so that an alert can tell a late round from a long interval.
func (r *Registry) CheckpointRound(connector string, task int, interval time.Duration, at time.Time) {
	lv := []string{validLabel(connector), strconv.Itoa(task)}
	r.health.cpInterval.WithLabelValues(lv...).Set(interval.Seconds())
	r.health.cpRound.WithLabelValues(lv...).Set(float64(at.UnixNano()) / 1e9)
}

// RemoveCheckpointTask deletes a checkpoint task's round series, when its run ends.
func (r *Registry) RemoveCheckpointTask(connector string, task int) {
	lv := []string{validLabel(connector), strconv.Itoa(task)}
	r.health.cpRound.DeleteLabelValues(lv...)
	r.health.cpInterval.DeleteLabelValues(lv...)
}
