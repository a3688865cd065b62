package source

import (
	"log/slog"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// Plugin is MirrorSourceConnector for the connectors registry. What its tasks share across the worker (the
// offset-syncs producers, the admin clients, the C data path's process budget) lives here, once per worker.
type Plugin struct {
	metrics *metrics.Registry // nil: the tasks report no metrics
	syncs   *producerPool
	admins  *adminPool
	eos     mirrorconfig.ExactlyOnceSourceSupport
	data    DataPath // how source tasks move records (DataPathAuto when empty)
	procs   *cpathProcs
	// consumerStatsMax, producerStatsMax: see WithConsumerStatsLimit and WithProducerStatsLimit.
	consumerStatsMax, producerStatsMax int
	assign                             TaskAssignment // see WithTaskAssignment
}

var _ connectors.OffsetsPlugin = (*Plugin)(nil)

// New returns the source plugin; its shared clients log to log, and its connectors and tasks report to m (nil
// for none: the partitions they publish are the same either way).
func New(log *slog.Logger, m *metrics.Registry) *Plugin {
	return &Plugin{syncs: newProducerPool(log), admins: newAdminPool(log), metrics: m, procs: newCPathProcs(),
		consumerStatsMax: DefaultConsumerStatsMaxPartitions, producerStatsMax: DefaultProducerStatsMaxPartitions, assign: AssignTopics}
}

// WithConsumerStatsLimit sets how many partitions a source task's replication consumer may know of (every
// partition of each topic it reads) and still run with librdkafka statistics; at most 0: no limit. The default
// is DefaultConsumerStatsMaxPartitions, which says why. It returns p.
func (p *Plugin) WithConsumerStatsLimit(n int) *Plugin {
	p.consumerStatsMax = n
	return p
}

// WithProducerStatsLimit is WithConsumerStatsLimit for a source task's replication producer (every partition of
// each remote topic it writes); the default is DefaultProducerStatsMaxPartitions. It returns p.
func (p *Plugin) WithProducerStatsLimit(n int) *Plugin {
	p.producerStatsMax = n
	return p
}

// WithExactlyOnceSource sets the worker's exactly-once source support: when enabled, source tasks replicate
// in transactions (transactions.go). It returns p.
func (p *Plugin) WithExactlyOnceSource(s mirrorconfig.ExactlyOnceSourceSupport) *Plugin {
	p.eos = s
	return p
}

// WithTaskAssignment sets how source connectors spread partitions over their tasks unless their config says
// (AssignTopics, the default, when empty). It returns p.
func (p *Plugin) WithTaskAssignment(a TaskAssignment) *Plugin {
	if a == "" {
		a = AssignTopics
	}
	p.assign = a
	return p
}

// WithDataPath sets how source tasks move records: DataPathAuto (the default), DataPathC, records moving in C
// with per-batch bookkeeping in Go (cpath.go; exactly-once tasks stay on the Go path), or DataPathGo.
// It returns p.
func (p *Plugin) WithDataPath(d DataPath) *Plugin {
	p.data = d
	return p
}

// Class implements connectors.Plugin.
func (p *Plugin) Class() string { return mirrorconfig.SourceConnectorClass }

// TaskClass implements connectors.Plugin.
func (p *Plugin) TaskClass() string { return connectors.SourceTaskClass }

// NewConnector implements connectors.Plugin.
func (p *Plugin) NewConnector(name string, cfg connectors.Config, log *slog.Logger) tasks.Connector {
	return &sourceConnector{name: name, cfg: newConfig(cfg), log: log, assignment: p.assign, metrics: p.metrics}
}

// NewTask implements connectors.Plugin.
func (p *Plugin) NewTask(id tasks.TaskID, cfg connectors.Config, log *slog.Logger) tasks.Task {
	return &sourceTask{id: id, cfg: newConfig(cfg), log: log, syncs: p.syncs, admins: p.admins, metrics: p.metrics, eos: p.eos.Enabled(), dataPath: p.data,
		procs: p.procs, consumerStatsMax: p.consumerStatsMax, producerStatsMax: p.producerStatsMax}
}
