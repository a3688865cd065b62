package source

import (
	"context"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

func offsetsConfig(t *testing.T, extra map[string]string) connectors.Config {
	t.Helper()
	raw := map[string]string{
		"name": "mm2", "connector.class": mirrorconfig.SourceConnectorClass, "source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": "127.0.0.1:1", "target.cluster.bootstrap.servers": "127.0.0.1:1",
		"producer.override.socket.timeout.ms": "120000",
	}
	for k, v := range extra {
		raw[k] = v
	}
	p, _ := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	cfg, err := connectors.ParseConfig(p, raw, clientconfig.Options{})
	require.NoError(t, err)
	return cfg
}

// An offsets change goes to the offsets topic the tasks read (MM2's, or the configured one) through a
// transactional producer whose timeouts fit its transaction, reading the topic as a task does (committed only).
func TestOffsetsWriteUsesTheTasksTopicAndATransactionalProducer(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	w, err := newOffsetsWrite(offsetsConfig(t, nil), "mm2", log)
	require.NoError(t, err)
	require.Equal(t, "mm2-offsets.A.internal", w.topic)
	require.Equal(t, "B", w.targetAlias)
	require.Equal(t, "true", w.producerProps["enable.idempotence"])
	require.Equal(t, "20000", w.producerProps["message.timeout.ms"], "within the REST API's wait")
	require.Equal(t, "60000", w.producerProps["transaction.timeout.ms"])
	require.Equal(t, "60000", w.producerProps["socket.timeout.ms"], "at most 100 ms above the transaction timeout")
	require.Equal(t, "read_committed", w.consumerProps["isolation.level"])
	require.NotEmpty(t, w.adminProps["bootstrap.servers"])

	w, err = newOffsetsWrite(offsetsConfig(t, map[string]string{mirrorconfig.OffsetsStorageTopicConfig: " my-offsets "}), "mm2", log)
	require.NoError(t, err)
	require.Equal(t, "my-offsets", w.topic)
}

// A request whose offsets are not MirrorSourceConnector's is refused before any client is opened.
func TestWriteOffsetsRefusesForeignPartitions(t *testing.T) {
	p := New(slog.New(slog.DiscardHandler), nil)
	err := p.WriteOffsets(context.Background(), offsetsEnvOnly{}, "mm2", offsetsConfig(t, nil),
		[]kmtype.Offset{{Partition: map[string]any{"file": "x"}}}, false)
	require.ErrorContains(t, err, "is not a MirrorSourceConnector partition")
}

// offsetsEnvOnly is an OffsetsEnv nothing may be asked of (nil methods panic).
type offsetsEnvOnly struct{ tasks.OffsetsEnv }
