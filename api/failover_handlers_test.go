package api_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// TestFailoverRequests checks what POST /connectors/{c}/failover files and refuses, and what GET shows: the
// operation is filed pending with its settings, one at a time per connector, and shown with its report once a
// runner finished it.
func TestFailoverRequests(t *testing.T) {
	f := newFixture(t)
	f.create("src", sourceConfig())
	f.create("ck", checkpointConfig())

	requireError(t, f.do("POST", "/connectors/nope/failover", "{}"), 404, "Connector nope not found")
	requireError(t, f.do("POST", "/connectors/ck/failover", "{}"), 404,
		"Connector ck is not a MirrorSourceConnector (connector.class is org.apache.kafka.connect.mirror.MirrorCheckpointConnector); a failover is of the source connector of a flow")
	requireError(t, f.do("POST", "/connectors/src/failover", `{"drain_timeout_ms":-1}`), 400,
		"Invalid request body: drain_timeout_ms must be between 0 and 3600000, not -1")
	requireError(t, f.do("POST", "/connectors/src/failover", `{"drain_timeout_ms":"soon"}`), 400,
		`Invalid request body: "drain_timeout_ms" must be a whole number of milliseconds, not a string`)
	requireError(t, f.do("POST", "/connectors/src/failover", `{"checkpoint_connector":"gone"}`), 400,
		"Invalid request body: checkpoint_connector: connector gone not found")
	requireError(t, f.do("POST", "/connectors/src/failover", `{"checkpoint_connector":"src"}`), 400,
		"Invalid request body: checkpoint_connector: connector src is not a MirrorCheckpointConnector")
	r := f.do("POST", "/connectors/src/failover", `{"drain_timeout":1}`)
	require.Equal(t, 400, r.status, r.body)
	require.Contains(t, r.body, `Unrecognized field \"drain_timeout\"`)
	requireError(t, f.do("GET", "/connectors/src/failover", ""), 404, "Connector src has no failover")

	r = f.do("POST", "/connectors/src/failover", `{"checkpoint_connector":"ck","drain_timeout_ms":5000}`)
	require.Equal(t, http.StatusAccepted, r.status, r.body)
	require.Equal(t, "/connectors/src/failover", r.header.Get("Location"))
	filed := decode[map[string]any](t, r)
	require.Equal(t, "pending", filed["state"])
	require.Equal(t, "failover", filed["kind"])
	require.Equal(t, "ck", filed["checkpoint_connector"])
	require.InDelta(t, 5000, filed["drain_timeout_ms"], 0)
	require.Nil(t, filed["report"])
	requireError(t, f.do("POST", "/connectors/src/failover", ""), 409,
		"A failover or failback of connector src is already under way: see GET /connectors/src/failover")
	requireError(t, f.do("POST", "/connectors/src/failover", `{"failover_of":"src"}`), 400,
		"Invalid request body: failover_of: only a failback takes it")

	// A runner takes it and ends it with a report; GET shows both.
	ctx := t.Context()
	taken, err := f.store.TakeFailover(ctx, "w1", time.Minute)
	require.NoError(t, err)
	require.NotNil(t, taken)
	require.NoError(t, f.store.FailoverProgress(ctx, taken.ID, "w1", "draining"))
	got := decode[map[string]any](t, f.do("GET", "/connectors/src/failover", ""))
	require.Equal(t, "running", got["state"])
	require.Equal(t, "draining", got["phase"])
	require.ErrorIs(t, f.store.FailoverProgress(ctx, taken.ID, "w2", "groups"), kmtype.ErrFenced)
	require.NoError(t, f.store.FinishFailover(ctx, taken.ID, "w1", json.RawMessage(`{"connector":"src","not_replicated_offsets":3}`), ""))
	got = decode[map[string]any](t, f.do("GET", "/connectors/src/failover", ""))
	require.Equal(t, "succeeded", got["state"])
	require.Nil(t, got["phase"])
	require.NotNil(t, got["finished_at"])
	require.Equal(t, map[string]any{"connector": "src", "not_replicated_offsets": float64(3)}, got["report"])

	// Finished, another may be filed; with an empty body it takes the defaults.
	r = f.do("POST", "/connectors/src/failover", "")
	require.Equal(t, http.StatusAccepted, r.status, r.body)
	again := decode[map[string]any](t, r)
	require.Nil(t, again["checkpoint_connector"])
	require.InDelta(t, 60000, again["drain_timeout_ms"], 0)
}

// TestFailbackRequests checks POST /connectors/{c}/failback on the B→A source connector: it names the A→B
// connector whose succeeded failover it undoes, and is shown apart from the failovers.
func TestFailbackRequests(t *testing.T) {
	f := newFixture(t)
	f.create("src", sourceConfig())
	ba := sourceConfig()
	ba["source.cluster.alias"], ba["target.cluster.alias"] = "B", "A"
	f.create("ba", ba)

	requireError(t, f.do("POST", "/connectors/ba/failback", "{}"), 400,
		"Invalid request body: failover_of: required, the MirrorSourceConnector (A→B) whose failover this failback undoes")
	requireError(t, f.do("POST", "/connectors/ba/failback", `{"failover_of":"src"}`), 400,
		"Invalid request body: failover_of: connector src has no succeeded failover to fail back from")
	ctx := t.Context()
	_, err := f.store.RequestFailover(ctx, store.FailoverRequest{Kind: store.KindFailover, Connector: "src", Drain: time.Second})
	require.NoError(t, err)
	taken, err := f.store.TakeFailover(ctx, "w1", time.Minute)
	require.NoError(t, err)
	require.NoError(t, f.store.FinishFailover(ctx, taken.ID, "w1", json.RawMessage(`{"kind":"failover"}`), ""))

	r := f.do("POST", "/connectors/ba/failback", `{"failover_of":"src","drain_timeout_ms":0}`)
	require.Equal(t, http.StatusAccepted, r.status, r.body)
	require.Equal(t, "/connectors/ba/failback", r.header.Get("Location"))
	filed := decode[map[string]any](t, r)
	require.Equal(t, "failback", filed["kind"])
	require.Equal(t, "src", filed["failover_of"])
	require.Equal(t, "pending", decode[map[string]any](t, f.do("GET", "/connectors/ba/failback", ""))["state"])
	requireError(t, f.do("GET", "/connectors/ba/failover", ""), 404, "Connector ba has no failover")
	require.Equal(t, "succeeded", decode[map[string]any](t, f.do("GET", "/connectors/src/failover", ""))["state"])
}
