package kmtype

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Bases of a group offset translation.
const (
	BasisOffsetMap   = "offset_map"   // kmirror's exact offset map
	BasisOffsetSyncs = "offset_syncs" // MM2's offset syncs (approximate, never ahead)
	BasisNone        = "none"         // nothing to translate with
)

// GroupOffset is a checkpoint connector's latest translation of one consumer group's position in one source
// partition.
type GroupOffset struct {
	Group          string
	Topic          string // the source topic
	Partition      int32
	UpstreamOffset int64 // the group's committed offset on the source
	// DownstreamTopic and DownstreamOffset are where the group resumes on the target; DownstreamOffset is nil
	// when the position cannot be translated (Basis says why).
	DownstreamTopic  string
	DownstreamOffset *int64
	Exact            bool
	Basis            string
	// Metadata is the group's commit metadata, byte for byte as Kafka keeps it (any bytes, NUL included).
	Metadata string
	// ReadAt is when the group's offsets were read on the source; ReplicatedAt is when the offset map behind
	// the translation last grew (nil for other bases).
	ReadAt       time.Time
	ReplicatedAt *time.Time
	// Emitted says a checkpoint for this translation is on the checkpoints topic.
	Emitted bool
}

// TextStorable reports whether s can be stored as PostgreSQL text: valid UTF-8 without NUL. A Kafka group id is
// any string its client sent, so one may not be.
func TextStorable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}
