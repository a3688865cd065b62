package server_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFailbackExactlyOnce: on workers with exactly-once source support a source connector resumes from its
// offsets topic on the target, so a failback must set the B→A connector's start there too, not in PostgreSQL
// alone. Expected: A holds only the records produced on B after the failover, once, and the group resumes on A
// at its position on B, exactly.
func TestFailbackExactlyOnce(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", withExactlyOnce)
	topic, local, group := failedOver(t, k, "fbeos")
	code, body := k.do(http.MethodPost, "/connectors/back/failback", map[string]any{"failover_of": "mirror", "checkpoint_connector": "checkpoints-back",
		"drain_timeout_ms": 30_000})
	require.Equal(t, http.StatusAccepted, code, "%v", body)
	awaitOperationState(t, k, "back", "failback", "succeeded")
	code, body = k.do(http.MethodGet, "/connectors/back/failback", nil)
	require.Equal(t, http.StatusOK, code)
	rep := body.(map[string]any)["report"].(map[string]any)
	require.Equal(t, fmt.Sprint([]any{map[string]any{"topic": local, "partition": 0, "offset": 5}}), fmt.Sprint(rep["started_from"]))
	p := rep["groups"].([]any)[0].(map[string]any)["partitions"].([]any)[0].(map[string]any)
	require.Equal(t, topic, p["target_topic"], "group %s", group)
	require.Equal(t, "60", fmt.Sprint(p["target_offset"]))
	require.Equal(t, true, p["exact"])
	requireFailedBack(t, local)
}
