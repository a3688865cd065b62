package failover

// Report is what a failover did and what it means for the data and the consumer groups, kept with the operation
// (GET /connectors/{c}/failover). Offsets are Kafka offsets; a range is inclusive at both ends.
type Report struct {
	// Kind is "failover", or "failback": Connector is then the B→A source connector, and FailoverOf the A→B one
	// whose failover it undoes.
	Kind        string `json:"kind"`
	Connector   string `json:"connector"`
	FailoverOf  string `json:"failover_of,omitempty"`
	SourceAlias string `json:"source_alias"`
	TargetAlias string `json:"target_alias"`
	// CheckpointConnectors are the checkpoint connectors whose groups were moved: the one named in the request,
	// or every MirrorCheckpointConnector of the same source and target aliases.
	CheckpointConnectors []string `json:"checkpoint_connectors"`
	// SourceReachable says the source cluster answered when the failover looked at it; false, nothing waited
	// for it and what it still holds is known only from what the source connector last saw.
	SourceReachable bool `json:"source_reachable"`
	// Drained says the source connector replicated, before it was stopped, everything the source held when the
	// failover began (its end offsets then), within the drain timeout.
	Drained bool `json:"drained"`
	// SourceStopped says the source connector is STOPPED and its tasks have committed their last offsets, so
	// the positions below are final.
	SourceStopped bool   `json:"source_stopped"`
	StartedAt     string `json:"started_at"`
	StoppedAt     string `json:"stopped_at"`
	// Partitions are the source connector's partitions, by topic and partition.
	Partitions []PartitionReport `json:"partitions"`
	// NotReplicatedOffsets counts the offsets of every not_replicated range.
	NotReplicatedOffsets int64 `json:"not_replicated_offsets"`
	// Groups are the followed consumer groups, by id.
	Groups []GroupReport `json:"groups"`
	// TargetEnds are the end offsets of the target's own topics (not replicated from the source, not internal)
	// when the source connector stopped: what producers write on the target after the failover starts there,
	// which is what a failback copies back.
	TargetEnds []TopicPartitionOffset `json:"target_ends"`
	// StartedFrom are, for a failback, the partitions the B→A connector was set to start from (the failover's
	// target_ends): everything before them was on B before the failover and is not copied to A.
	StartedFrom []TopicPartitionOffset `json:"started_from,omitempty"`
}

// PartitionReport is one source partition.
type PartitionReport struct {
	SourceTopic string `json:"source_topic"`
	Partition   int32  `json:"partition"`
	TargetTopic string `json:"target_topic"`
	// ReplicatedTo is the first source offset whose record is not on the target: every record before it is.
	ReplicatedTo int64 `json:"replicated_to"`
	// SourceEnd is the source's end offset (the next offset it will give a record) after the stop; null when it
	// is not known.
	SourceEnd *int64 `json:"source_end"`
	// EndBasis says where SourceEnd comes from: "listed" (asked of the source after the stop), "last_seen"
	// (the source could not be reached: the highest end the source connector saw, so the source may hold
	// more) or "unknown".
	EndBasis string `json:"end_basis"`
	// NotReplicated is the range of source offsets that are on the source but not on the target; null when
	// there is none (or, end_basis unknown, none is known).
	NotReplicated *OffsetRange `json:"not_replicated"`
}

// OffsetRange is an inclusive range of offsets.
type OffsetRange struct {
	From int64 `json:"from"`
	To   int64 `json:"to"`
}

// Count is how many offsets the range spans.
func (r OffsetRange) Count() int64 { return r.To - r.From + 1 }

// Actions taken for a group on the target.
const (
	ActionCommitted = "committed" // the translated offsets were committed (the partitions say which)
	ActionActive    = "active"    // the group has members on the target: nothing was written
	ActionFailed    = "failed"    // committing failed (Error says why)
	ActionNone      = "none"      // nothing to commit: no partition translates
)

// GroupReport is one consumer group.
type GroupReport struct {
	Group string `json:"group"`
	// Action is what the failover did with the group on the target (ActionCommitted, …).
	Action string `json:"action"`
	// TargetState and TargetMembers are what the target said of the group before anything was written.
	TargetState   string          `json:"target_state"`
	TargetMembers int             `json:"target_members"`
	Error         string          `json:"error,omitempty"`
	Partitions    []GroupPosition `json:"partitions"`
}

// Sources of a group's position on the source cluster.
const (
	PositionRead     = "read"      // read from the source during the failover
	PositionLastRead = "last_read" // the source could not be reached: the checkpoint connector's last read
)

// GroupPosition is where a group resumes in one partition.
type GroupPosition struct {
	SourceTopic  string `json:"source_topic"`
	Partition    int32  `json:"partition"`
	SourceOffset int64  `json:"source_offset"`
	// PositionFrom is "read" (read from the source during the failover) or "last_read" (the source could not
	// be reached: the checkpoint connector's last read of it, at ReadAt).
	PositionFrom string `json:"position_from"`
	ReadAt       string `json:"read_at"`
	TargetTopic  string `json:"target_topic"`
	// TargetOffset is where the group resumes on the target; null when the position cannot be translated.
	TargetOffset *int64 `json:"target_offset"`
	// Exact says resuming at TargetOffset reads every later record once and none twice; otherwise TargetOffset
	// is behind (records are re-read, none skipped).
	Exact bool   `json:"exact"`
	Basis string `json:"basis"`
	// Committed says TargetOffset is now the group's committed offset on the target; PreviousTargetOffset is
	// what the group had committed there before (null: nothing). A group already ahead on the target keeps its
	// offset (never moved back).
	Committed            bool   `json:"committed"`
	PreviousTargetOffset *int64 `json:"previous_target_offset"`
}

// TopicPartitionOffset is an offset of one partition.
type TopicPartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
}
