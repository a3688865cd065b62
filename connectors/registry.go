package connectors

import (
	"fmt"
	"log/slog"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// Task classes, as Connect records them in task configs (task.class).
const (
	SourceTaskClass     = "org.apache.kafka.connect.mirror.MirrorSourceTask"
	CheckpointTaskClass = "org.apache.kafka.connect.mirror.MirrorCheckpointTask"
	HeartbeatTaskClass  = "org.apache.kafka.connect.mirror.MirrorHeartbeatTask"
	taskClassKey        = "task.class"
)

// Registry creates MM2 connectors and tasks for the runtime.
type Registry struct {
	logger  func(name string) *slog.Logger
	syncs   *producerPool
	admins  *adminPool
	metrics *metrics.Registry // nil: the tasks report no metrics
	eos     mirrorconfig.ExactlyOnceSourceSupport
	clients clientconfig.Options
	data    DataPath // how source tasks move records (DataPathAuto when empty)
	procs   *cpathProcs
	// consumerStatsMax, producerStatsMax: see WithConsumerStatsLimit and WithProducerStatsLimit.
	consumerStatsMax, producerStatsMax int
	assign                             TaskAssignment // see WithTaskAssignment
}

// NewRegistry returns a Registry whose connectors log through loggers named by logger and whose tasks report
// to m (nil for none: the partitions they publish are the same either way). clients are the rules every
// client setting follows (allowed files, config providers): the same the REST API validates with.
func NewRegistry(logger func(name string) *slog.Logger, m *metrics.Registry, clients clientconfig.Options) *Registry {
	return &Registry{logger: logger, syncs: newProducerPool(logger("kmirror.connectors")), admins: newAdminPool(logger("kmirror.connectors")), metrics: m, clients: clients,
		procs: newCPathProcs(), consumerStatsMax: DefaultConsumerStatsMaxPartitions,
		producerStatsMax: DefaultProducerStatsMaxPartitions, assign: AssignTopics}
}

// WithConsumerStatsLimit sets how many partitions a source task's replication consumer may know of (every
// partition of each topic it reads) and still run with librdkafka statistics; at most 0: no limit. The default
// is DefaultConsumerStatsMaxPartitions, which says why. It returns r.
func (r *Registry) WithConsumerStatsLimit(n int) *Registry {
	r.consumerStatsMax = n
	return r
}

// WithProducerStatsLimit is WithConsumerStatsLimit for a source task's replication producer (every partition of
// each remote topic it writes); the default is DefaultProducerStatsMaxPartitions. It returns r.
func (r *Registry) WithProducerStatsLimit(n int) *Registry {
	r.producerStatsMax = n
	return r
}

// WithExactlyOnceSource sets the worker's exactly-once source support: when enabled, source tasks replicate
// in transactions (source_transactions.go). It returns r.
func (r *Registry) WithExactlyOnceSource(s mirrorconfig.ExactlyOnceSourceSupport) *Registry {
	r.eos = s
	return r
}

// WithTaskAssignment sets how source connectors spread partitions over their tasks unless their config says
// (AssignTopics, the default, when empty). It returns r.
func (r *Registry) WithTaskAssignment(a TaskAssignment) *Registry {
	if a == "" {
		a = AssignTopics
	}
	r.assign = a
	return r
}

// WithDataPath sets how source tasks move records: DataPathAuto (the default), DataPathC, records moving in C
// with per-batch bookkeeping in Go (source_cpath.go; exactly-once tasks stay on the Go path), or DataPathGo.
// It returns r.
func (r *Registry) WithDataPath(d DataPath) *Registry {
	r.data = d
	return r
}

var _ tasks.Registry = (*Registry)(nil)

// NewConnector returns the connector instance for config's connector.class.
func (r *Registry) NewConnector(name string, config map[string]string) (tasks.Connector, error) {
	p, ok := mirrorconfig.LookupPlugin(config["connector.class"])
	if !ok {
		return nil, fmt.Errorf("unknown connector class %q", config["connector.class"])
	}
	cfg, err := parseConfig(p, config, r.clients)
	if err != nil {
		return nil, err
	}
	log := r.logger("kmirror.connectors").With("connector", name)
	switch p.Class {
	case mirrorconfig.HeartbeatConnectorClass:
		return &heartbeatConnector{name: name, cfg: cfg, log: log}, nil
	case mirrorconfig.SourceConnectorClass:
		return &sourceConnector{name: name, cfg: cfg, log: log, assignment: r.assign, metrics: r.metrics}, nil
	case mirrorconfig.CheckpointConnectorClass:
		return &checkpointConnector{name: name, cfg: cfg, log: log}, nil
	}
	return nil, fmt.Errorf("connector class %s is not implemented yet", p.Class)
}

// NewTask returns the task for a task config published by one of this registry's connectors.
func (r *Registry) NewTask(id tasks.TaskID, config map[string]string) (tasks.Task, error) {
	class := config[taskClassKey]
	var p mirrorconfig.Plugin
	switch class {
	case HeartbeatTaskClass:
		p, _ = mirrorconfig.LookupPlugin(mirrorconfig.HeartbeatConnectorClass)
	case SourceTaskClass:
		p, _ = mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	case CheckpointTaskClass:
		p, _ = mirrorconfig.LookupPlugin(mirrorconfig.CheckpointConnectorClass)
	default:
		return nil, fmt.Errorf("unknown task class %q in the config of task %s", class, id)
	}
	cfg, err := parseConfig(p, config, r.clients)
	if err != nil {
		return nil, err
	}
	log := r.logger("kmirror.connectors").With("task", id.String())
	switch class {
	case HeartbeatTaskClass:
		return &heartbeatTask{id: id, cfg: cfg, log: log}, nil
	case SourceTaskClass:
		return &sourceTask{id: id, cfg: cfg, log: log, syncs: r.syncs, admins: r.admins, metrics: r.metrics, eos: r.eos.Enabled(), dataPath: r.data,
			procs: r.procs, consumerStatsMax: r.consumerStatsMax, producerStatsMax: r.producerStatsMax}, nil
	case CheckpointTaskClass:
		return &checkpointTask{id: id, cfg: cfg, log: log, metrics: r.metrics}, nil
	}
	return nil, fmt.Errorf("task class %s is not implemented yet", class)
}
