package kmtype

// Notice is a fact a running unit reports while it goes on: data it could not replicate (with the offsets), a
// cluster it cannot reach, a remote topic that is gone. Kind says which; the other fields are those that apply.
type Notice struct {
	Kind        string `json:"kind"`
	Message     string `json:"message"`
	Topic       string `json:"topic,omitempty"`
	Partition   *int32 `json:"partition,omitempty"`
	FirstOffset *int64 `json:"first_offset,omitempty"`
	LastOffset  *int64 `json:"last_offset,omitempty"`
	// Level is "info" for a fact that is no problem (the unit is healthy); empty for a problem.
	Level string `json:"level,omitempty"`
}

// NoticeLevelInfo marks a notice that reports a fact, not a problem (Notice.Level).
const NoticeLevelInfo = "info"

// Loss is a lasting notice of a connector about records lost for good, with the key that identifies it.
type Loss struct {
	Key    string
	Notice Notice
}
