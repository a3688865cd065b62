package mirrorconfig

import (
	"strings"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// kmirror's own connector keys. They live beside the plugin's definition rather than in it: GET
// /connector-plugins/{plugin}/config and the validate endpoint must answer as Connect does, so these keys are
// checked only when a config sets them (kmirrorRules) and read through KmirrorDef.
const (
	// TaskAssignmentConfig chooses how a MirrorSourceConnector deals its partitions to its tasks, overriding
	// the worker's --task-assignment: TaskAssignmentTopics or TaskAssignmentPartitions.
	TaskAssignmentConfig = "kmirror.task.assignment"
	// TaskMovesEnabledConfig turns the moves of partitions between tasks by measured load on or off (the
	// topics assignment only).
	TaskMovesEnabledConfig = "kmirror.task.moves.enabled"
	// TaskMovesSustainConfig is how long a task must carry more than its share before a move is planned.
	TaskMovesSustainConfig = "kmirror.task.moves.sustain.ms"
	// ProvenanceEnabledConfig turns the provenance header and the cycle guard on or off (docs/provenance.md).
	ProvenanceEnabledConfig = "kmirror.provenance.enabled"
)

// The values of TaskAssignmentConfig (and of the worker's --task-assignment).
const (
	// TaskAssignmentTopics deals partitions evenly (±1) with each topic on as few tasks as that allows, then
	// moves them between tasks by measured load.
	TaskAssignmentTopics = "topics"
	// TaskAssignmentPartitions is MM2's spread: partitions dealt round-robin by topic, then partition, never
	// moved by load.
	TaskAssignmentPartitions = "partitions"
)

// Defaults of the move keys: the load a task carries must stay above its share for a minute.
const DefaultTaskMovesSustainMs = 60_000

// kmirrorKeys are the kmirror keys of plugin p.
func kmirrorKeys(p Plugin) []configdef.Key {
	if p.Class != SourceConnectorClass {
		return nil
	}
	return []configdef.Key{
		validated(key(TaskAssignmentConfig, configdef.TypeString, "", configdef.ImportanceMedium,
			"How partitions are dealt to tasks: topics (each task an even share, each topic on as few tasks as "+
				"that allows, then moved by measured load) or partitions (MM2's round-robin spread). Empty: the "+
				"worker's --task-assignment."),
			configdef.ValidatorFunc("[, topics, partitions]", func(name string, value any) error {
				s, _ := value.(string)
				switch strings.ToLower(strings.TrimSpace(s)) {
				case "", TaskAssignmentTopics, TaskAssignmentPartitions:
					return nil
				}
				return configdef.NewConfigError(name, value, "String must be one of: topics, partitions")
			})),
		key(TaskMovesEnabledConfig, configdef.TypeBoolean, true, configdef.ImportanceLow,
			"Whether partitions move between the connector's tasks when one task carries more than 1.5 times "+
				"the mean load for kmirror.task.moves.sustain.ms (topics assignment only)."),
		validated(key(TaskMovesSustainConfig, configdef.TypeLong, DefaultTaskMovesSustainMs, configdef.ImportanceLow,
			"How long a task must carry more than 1.5 times the mean load before a move is planned."),
			configdef.AtLeast(int64(1000))),
		key(ProvenanceEnabledConfig, configdef.TypeBoolean, true, configdef.ImportanceMedium,
			"Whether every record copied carries the header naming the cluster it was first produced on "+
				"(__kmirror_origin), and records whose header names the target cluster are not copied back "+
				"into it. false copies records exactly as MirrorMaker 2 does."),
	}
}

// KmirrorDef is the definition of plugin p's kmirror keys, for reading a connector's config.
func KmirrorDef(p Plugin) *configdef.Def {
	d := configdef.New()
	for _, k := range kmirrorKeys(p) {
		d.Define(k)
	}
	return d
}

// kmirrorKeyRules reports the kmirror keys a config sets to values their definition refuses.
func kmirrorKeyRules(p Plugin, props map[string]*string, v *validation) {
	def := KmirrorDef(p)
	for _, cv := range def.Validate(props) {
		if _, set := props[cv.Name]; !set {
			continue
		}
		for _, msg := range cv.Errors {
			v.addError(cv.Name, props[cv.Name], msg)
		}
	}
}
