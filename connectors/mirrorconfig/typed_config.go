package mirrorconfig

// The typed configs (SourceConfig, CheckpointConfig, HeartbeatConfig and the constants naming their keys)
// are generated from Kafka's own dumps of the three definitions, which the golden test holds the
// hand-written definitions to: a field is a key Kafka defines, with the Go type its Kafka type parses to,
// so a misspelt key is a compile error rather than a panic when a task first reads it.
//go:generate go run ./internal/genconfig

// KmirrorConfig holds kmirror's own keys of a connector (KmirrorDef), typed.
type KmirrorConfig struct {
	// TaskAssignment is kmirror.task.assignment: TaskAssignmentTopics, TaskAssignmentPartitions, or "" for
	// the worker's choice.
	TaskAssignment string
	// TaskMovesEnabled is kmirror.task.moves.enabled.
	TaskMovesEnabled bool
	// TaskMovesSustainMs is kmirror.task.moves.sustain.ms.
	TaskMovesSustainMs int64
	// ProvenanceEnabled is kmirror.provenance.enabled.
	ProvenanceEnabled bool
}

// ParseKmirror parses plugin p's kmirror keys from a connector's raw config. Only the source connector has
// any; the others get the zero KmirrorConfig.
func ParseKmirror(p Plugin, raw map[string]string) (KmirrorConfig, error) {
	v, err := KmirrorDef(p).Parse(raw)
	if err != nil || p.Class != SourceConnectorClass {
		return KmirrorConfig{}, err
	}
	return KmirrorConfig{
		TaskAssignment:     v.String(TaskAssignmentConfig),
		TaskMovesEnabled:   v.Bool(TaskMovesEnabledConfig),
		TaskMovesSustainMs: v.Long(TaskMovesSustainConfig),
		ProvenanceEnabled:  v.Bool(ProvenanceEnabledConfig),
	}, nil
}

// The values of offset-syncs.topic.location.
const (
	OffsetSyncsLocationSource = "source"
	OffsetSyncsLocationTarget = "target"
)
