package source

import (
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
)

// The records of an offsets change are Java MM2's: its key bytes, {"offset":n}, and a null value for a
// tombstone, whatever number type the store handed the offsets over in.
func TestOffsetsTopicRecords(t *testing.T) {
	t.Parallel()
	recs, err := offsetsTopicRecords("mm2", []kmtype.Offset{
		{Partition: map[string]any{"cluster": "A", "topic": "t", "partition": json.Number("3")}, Offset: map[string]any{"offset": json.Number("41")}},
		{Partition: map[string]any{"cluster": "A", "topic": "t", "partition": int64(4)}},
	})
	require.NoError(t, err)
	require.Len(t, recs, 2)
	require.Equal(t, `["mm2",{"cluster":"A","partition":3,"topic":"t"}]`, string(recs[0].key))
	require.Equal(t, `{"offset":41}`, string(recs[0].value))
	require.Equal(t, `["mm2",{"cluster":"A","partition":4,"topic":"t"}]`, string(recs[1].key))
	require.Nil(t, recs[1].value, "a tombstone")

	_, err = offsetsTopicRecords("mm2", []kmtype.Offset{{Partition: map[string]any{"cluster": "A", "topic": "t", "partition": "x"}}})
	require.ErrorContains(t, err, "is not a MirrorSourceConnector partition")
	_, err = offsetsTopicRecords("mm2", []kmtype.Offset{{Partition: map[string]any{"cluster": "A", "topic": "t", "partition": int64(0)},
		Offset: map[string]any{"offset": json.Number("1.5")}}})
	require.ErrorContains(t, err, "is not an integer")
}

// Only an exactly-once worker's MirrorSourceConnector keeps offsets outside PostgreSQL, and the writer's id
// can never be a task's.
func TestWritesOffsets(t *testing.T) {
	t.Parallel()
	source := map[string]string{"connector.class": mirrorconfig.SourceConnectorClass}
	checkpoint := map[string]string{"connector.class": mirrorconfig.CheckpointConnectorClass}
	log := slog.New(slog.DiscardHandler)
	p := New(log, nil)
	r := connectors.NewRegistry(func(string) *slog.Logger { return log }, clientconfig.Options{}, p)
	require.False(t, r.WritesOffsets(source), "at-least-once: PostgreSQL is the truth")
	p.WithExactlyOnceSource(mirrorconfig.ExactlyOnceSourceEnabled)
	require.True(t, r.WritesOffsets(source))
	require.False(t, r.WritesOffsets(checkpoint))
	require.Equal(t, "kmirror-mm2-offsets", offsetsTransactionalID("mm2"))
	require.Equal(t, []string{"kmirror-mm2-0", "kmirror-mm2-2"}, transactionalIDs("mm2", []int{0, 2}))
}
