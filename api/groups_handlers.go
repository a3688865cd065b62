package api

import (
	"encoding/base64"
	"errors"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/store"
)

// timeLayout is how the group endpoints write instants: RFC 3339 in UTC with milliseconds, as GET /workers does.
const timeLayout = "2006-01-02T15:04:05.000Z"

// consumerGroup is one group in GET /connectors/{c}/groups, a kmirror extension for failover: Connect has no
// endpoint for it, and MM2 users otherwise read the checkpoints topic with RemoteClusterUtils to learn the same.
type consumerGroup struct {
	Group      string `json:"group"`
	Partitions int    `json:"partitions"`
	// InexactPartitions counts the partitions whose translation is approximate (offset syncs, or an offset map
	// that has not caught up with the group yet) or missing; Exact says there is none.
	InexactPartitions int  `json:"inexact_partitions"`
	Exact             bool `json:"exact"`
	// ReadAt is the oldest time the group's committed offsets were read on the source, over its partitions, and
	// AgeMs its age by this worker's clock.
	ReadAt string `json:"read_at"`
	AgeMs  int64  `json:"age_ms"`
}

type consumerGroupsBody struct {
	Name   string          `json:"name"`
	Groups []consumerGroup `json:"groups"`
}

// groupOffset is one source partition in GET /connectors/{c}/groups/{group}/offsets: where the group is on the
// source and where it resumes on the target.
type groupOffset struct {
	SourceTopic  string `json:"source_topic"`
	Partition    int32  `json:"partition"`
	SourceOffset int64  `json:"source_offset"`
	TargetTopic  string `json:"target_topic"`
	// TargetOffset is null when the position cannot be translated (basis "none", or before the oldest sync).
	TargetOffset *int64 `json:"target_offset"`
	Exact        bool   `json:"exact"`
	Basis        string `json:"basis"`
	// Metadata is the group's commit metadata as JSON text (a NUL as \u0000). Kafka keeps any bytes there; when
	// they are not valid UTF-8, which JSON text cannot carry, Metadata shows each invalid byte as U+FFFD and
	// MetadataBase64 holds the exact bytes (null otherwise).
	Metadata       string  `json:"metadata"`
	MetadataBase64 *string `json:"metadata_base64"`
	ReadAt         string  `json:"read_at"`
	AgeMs          int64   `json:"age_ms"`
	// ReplicatedAt is when the offset map behind the translation last grew; null for the other bases.
	ReplicatedAt      *string `json:"replicated_at"`
	CheckpointEmitted bool    `json:"checkpoint_emitted"`
}

type groupOffsetsBody struct {
	Name    string        `json:"name"`
	Group   string        `json:"group"`
	Offsets []groupOffset `json:"offsets"`
}

// listGroups is GET /connectors/{connector}/groups: the consumer groups the checkpoint connector translates,
// by name, each with how much of it translates exactly and how old its data is.
func (s *server) listGroups(w http.ResponseWriter, r *http.Request) error {
	c, err := s.checkpointConnector(r)
	if err != nil {
		return err
	}
	groups, err := s.Store.ConnectorGroups(r.Context(), c.Name)
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		return errorf(http.StatusNotFound, "Connector %s not found", c.Name)
	}
	if err != nil {
		return err
	}
	now := time.Now()
	out := consumerGroupsBody{Name: c.Name, Groups: make([]consumerGroup, 0, len(groups))}
	for _, g := range groups {
		out.Groups = append(out.Groups, consumerGroup{
			Group: g.Group, Partitions: g.Partitions, InexactPartitions: g.Approximate, Exact: g.Approximate == 0,
			ReadAt: formatTime(g.ReadAt), AgeMs: ageMs(now, g.ReadAt),
		})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getGroupOffsets is GET /connectors/{connector}/groups/{group}/offsets: per source partition, the group's
// committed offset on the source and the target offset to resume from, with what the translation rests on.
func (s *server) getGroupOffsets(w http.ResponseWriter, r *http.Request) error {
	c, err := s.checkpointConnector(r)
	if err != nil {
		return err
	}
	group, err := pathParam(r, "group")
	if err != nil {
		return err
	}
	offsets, err := s.Store.ConnectorGroupOffsets(r.Context(), c.Name, group)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Consumer group %s is not translated by connector %s", group, c.Name)
	}
	if err != nil {
		return err
	}
	now := time.Now()
	out := groupOffsetsBody{Name: c.Name, Group: group, Offsets: make([]groupOffset, 0, len(offsets))}
	for _, o := range offsets {
		g := groupOffset{
			SourceTopic: o.Topic, Partition: o.Partition, SourceOffset: o.UpstreamOffset,
			TargetTopic: o.DownstreamTopic, TargetOffset: o.DownstreamOffset, Exact: o.Exact, Basis: o.Basis,
			Metadata: o.Metadata, ReadAt: formatTime(o.ReadAt), AgeMs: ageMs(now, o.ReadAt), CheckpointEmitted: o.Emitted,
		}
		if !utf8.ValidString(o.Metadata) {
			b := base64.StdEncoding.EncodeToString([]byte(o.Metadata))
			g.MetadataBase64 = &b
		}
		if o.ReplicatedAt != nil {
			t := formatTime(*o.ReplicatedAt)
			g.ReplicatedAt = &t
		}
		out.Offsets = append(out.Offsets, g)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// checkpointConnector reads the connector named by the path, which must be a MirrorCheckpointConnector: only
// that connector translates groups.
func (s *server) checkpointConnector(r *http.Request) (store.Connector, error) {
	return s.connectorOfClass(r, mirrorconfig.CheckpointConnectorClass, "translates consumer groups")
}

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// ageMs is how long before now t was, never negative: the instants come from the worker that wrote them, whose
// clock may run slightly ahead of this one.
func ageMs(now, t time.Time) int64 {
	return max(now.Sub(t).Milliseconds(), 0)
}
