package server_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestRecordTooLargeNamesTheLimitThatWasHit: a 2 MB record on a source topic that allows 6,000,000 bytes fails
// its task, and the trace names the limit that was really too small: first the producer's max.request.size
// (the topic allows the record), then, with the producer raised, the remote topic's max.message.bytes, which
// the target broker enforced. The trace starts with the message, and the failed task has a notice.
func TestRecordTooLargeNamesTheLimitThatWasHit(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	for _, c := range []struct {
		name  string
		extra map[string]any
		want  string // the limit the trace must name
		not   string // advice that would be wrong here
	}{
		{name: "producer", want: "exceeds the target producer's max.request.size (1048576 bytes), so it was never sent",
			not: "refused the record as larger than topic"},
		{name: "broker", extra: map[string]any{"producer.override.max.request.size": "8000000", "sync.topic.configs.enabled": "false"},
			want: "refused the record as larger than topic", not: "exceeds the target producer's max.request.size"},
	} {
		t.Run(c.name, func(t *testing.T) {
			prefix := "huge" + c.name + uniqueAlias("")
			name := kafkatest.TopicName(t, prefix)
			kafkatest.CreateTopic(t, "A", name, 1, map[string]string{"max.message.bytes": "6000000"})
			// The remote topic exists with the broker's default limit, and its config is not synced.
			kafkatest.CreateTopic(t, "B", "A."+name, 1, nil)
			big := kafkatest.Record{Topic: name, Key: []byte("big"), Value: []byte(strings.Repeat("x", 2<<20))}
			require.NoError(t, kafkatest.ProduceTo(kafkatest.Bootstrap(t, "A"), []kafkatest.Record{big}, map[string]string{"message.max.bytes": "6000000"}))

			conn := "mm2-" + prefix
			code, body := k.do(http.MethodPut, "/connectors/"+conn+"/config", mirrorConfig(t, prefix+".*", c.extra))
			require.Equal(t, http.StatusCreated, code, "%v", body)
			k.awaitStates(conn, "RUNNING FAILED", time.Minute)
			trace := k.taskTraces(conn)
			t.Logf("trace: %s", trace)
			msg := "replicate A topic " + name + " partition 0 offset 0"
			require.True(t, strings.HasPrefix(trace, msg), "the trace starts with the message: %s", trace)
			require.Contains(t, trace, c.want)
			require.NotContains(t, trace, c.not)
			require.NotContains(t, trace, "*fmt.")

			_, body = k.do(http.MethodGet, "/connectors/"+conn+"/notices", nil)
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			require.Contains(t, string(raw), `"kind":"failed"`, "the failed task has a notice: %s", raw)
			require.Contains(t, string(raw), c.want)
			_, offsets := k.do(http.MethodGet, "/connectors/"+conn+"/offsets", nil)
			require.Empty(t, offsets.(map[string]any)["offsets"], "nothing was committed past the record")
		})
	}
}
