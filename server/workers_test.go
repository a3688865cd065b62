package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// GET /workers lists both members of a two-worker cluster, exactly one leader, and the connector's unit on one
// of them.
func TestWorkersListsMembersLeaderAndUnits(t *testing.T) {
	t.Parallel()
	k1 := startKmirror(t, "")
	k2 := startKmirror(t, k1.dbURL)
	name := "hb-" + uniqueAlias("")
	code, body := k1.do(http.MethodPut, "/connectors/"+name+"/config", map[string]any{
		"connector.class":                  "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector",
		"source.cluster.alias":             "A",
		"target.cluster.alias":             "B",
		"source.cluster.bootstrap.servers": "127.0.0.1:1",
		"target.cluster.bootstrap.servers": "127.0.0.1:1",
	})
	require.Equal(t, http.StatusCreated, code, "%v", body)

	var last any
	ok := func() bool {
		code, body := k2.do(http.MethodGet, "/workers", nil)
		last = []any{code, body}
		if code != http.StatusOK {
			return false
		}
		m := body.(map[string]any)
		workers := m["workers"].([]any)
		if len(workers) != 2 || m["leader"] == nil {
			return false
		}
		leaders, units := 0, 0
		for _, w := range workers {
			wk := w.(map[string]any)
			if wk["leader"].(bool) {
				leaders++
				if wk["id"] != m["leader"] {
					return false
				}
			}
			units += len(wk["assigned"].([]any))
			if age := mustInt(t, wk["heartbeat_age_ms"]); age < 0 || age > 6000 {
				return false
			}
		}
		// The connector instance, and its task once the connector has published it (that does not wait for the
		// unreachable target).
		return leaders == 1 && units >= 1
	}
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		require.True(t, time.Now().Before(deadline), "two workers, one leader, the connector's units; last answer: %v", last)
		time.Sleep(100 * time.Millisecond)
	}
}
