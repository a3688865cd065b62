package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
)

const (
	altered = `{"message":"The offsets for this connector have been altered successfully"}`
	reset   = `{"message":"The offsets for this connector have been reset successfully"}`
)

// stopped creates a connector that has been created STOPPED, so its offsets may be changed at once.
func (f *fixture) stopped(name string, cfg map[string]string) {
	f.t.Helper()
	r := f.do("POST", "/connectors", jsonText(f.t, map[string]any{"name": name, "config": cfg, "initial_state": "STOPPED"}))
	require.Equal(f.t, http.StatusCreated, r.status, r.body)
}

func TestOffsetsLifecycle(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connectors/c/offsets", ""), http.StatusNotFound, "Connector c not found")
	requireError(t, f.do("DELETE", "/connectors/c/offsets", ""), http.StatusNotFound, "Connector c not found")
	requireError(t, f.do("PATCH", "/connectors/c/offsets", `{"offsets":[{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":1}}]}`),
		http.StatusNotFound, "Connector c not found")

	f.stopped("c", sourceConfig())
	requireJSON(t, f.do("GET", "/connectors/c/offsets", ""), http.StatusOK, `{"offsets":[]}`)

	requireJSON(t, f.do("PATCH", "/connectors/c/offsets", `{"offsets":[`+
		`{"partition":{"cluster":"A","topic":"orders","partition":3},"offset":{"offset":41999}},`+
		`{"partition":{"cluster":"A","topic":"orders","partition":1},"offset":{"offset":1152921504606846976}},`+
		`{"partition":{"cluster":"A","topic":"orders","partition":3},"offset":{"offset":42000}}]}`), http.StatusOK, altered)
	requireJSON(t, f.do("GET", "/connectors/c/offsets", ""), http.StatusOK, `{"offsets":[`+
		`{"partition":{"cluster":"A","partition":1,"topic":"orders"},"offset":{"offset":1152921504606846976}},`+
		`{"partition":{"cluster":"A","partition":3,"topic":"orders"},"offset":{"offset":42000}}]}`)

	// A null offset removes the partition's offset; tombstones pass validation whatever the partition.
	requireJSON(t, f.do("PATCH", "/connectors/c/offsets", `{"offsets":[{"partition":{"cluster":"A","topic":"orders","partition":1},"offset":null},`+
		`{"partition":{"garbage":true}},{"partition":null,"offset":null}]}`), http.StatusOK, altered)
	requireJSON(t, f.do("GET", "/connectors/c/offsets", ""), http.StatusOK,
		`{"offsets":[{"partition":{"cluster":"A","partition":3,"topic":"orders"},"offset":{"offset":42000}}]}`)

	requireJSON(t, f.do("DELETE", "/connectors/c/offsets", ""), http.StatusOK, reset)
	requireJSON(t, f.do("GET", "/connectors/c/offsets", ""), http.StatusOK, `{"offsets":[]}`)
	requireJSON(t, f.do("DELETE", "/connectors/c/offsets", ""), http.StatusOK, reset)
}

func TestOffsetsNeedAStoppedConnector(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	body := `{"offsets":[{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":5}}]}`
	notStopped := "Connectors must be in the STOPPED state before their offsets can be modified. " +
		"This can be done for the specified connector by issuing a 'PUT' request to the '/connectors/c/stop' endpoint"

	// The body is checked first, even for an unknown connector.
	for _, empty := range []string{`{}`, `{"offsets":null}`, `{"offsets":[]}`} {
		requireError(t, f.do("PATCH", "/connectors/c/offsets", empty), http.StatusBadRequest,
			"Partitions / offsets need to be provided for an alter offsets request")
	}

	f.create("c", sourceConfig())
	requireError(t, f.do("PATCH", "/connectors/c/offsets", body), http.StatusBadRequest, notStopped)
	requireError(t, f.do("DELETE", "/connectors/c/offsets", ""), http.StatusBadRequest, notStopped)
	requireEmpty(t, f.do("PUT", "/connectors/c/pause", ""), http.StatusAccepted)
	requireError(t, f.do("PATCH", "/connectors/c/offsets", body), http.StatusBadRequest, notStopped)
	// Stopped, but the runtime has not removed the tasks yet.
	f.setTasks("c", 1)
	requireEmpty(t, f.do("PUT", "/connectors/c/stop", ""), http.StatusNoContent)
	requireError(t, f.do("PATCH", "/connectors/c/offsets", body), http.StatusBadRequest, notStopped)
	requireError(t, f.do("DELETE", "/connectors/c/offsets", ""), http.StatusBadRequest, notStopped)

	offs, err := f.store.Offsets(ctx, "c")
	require.NoError(t, err)
	require.Empty(t, offs)
}

func TestMirrorOffsetValidation(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.stopped("source", sourceConfig())
	f.stopped("checkpoint", withClass(sourceConfig(), "MirrorCheckpointConnector"))
	f.stopped("heartbeat", withClass(sourceConfig(), "org.apache.kafka.connect.mirror.MirrorHeartbeatConnector"))

	for _, tc := range []struct {
		connector, entry, message string
	}{
		{"source", `{"partition":{"topic":"t","partition":0},"offset":{"offset":1}}`,
			"Source partition {partition=0, topic=t} is missing the 'cluster' key, which is required"},
		{"source", `{"partition":{"cluster":5,"topic":"t","partition":0},"offset":{"offset":1}}`,
			"Source partition {cluster=5, partition=0, topic=t} has an invalid value 5 for the 'cluster' key, which must be a string"},
		{"source", `{"partition":{"cluster":"A","partition":0},"offset":{"offset":1}}`,
			"Source partition {cluster=A, partition=0} is missing the 'topic' key, which is required"},
		{"source", `{"partition":{"cluster":"A","topic":null,"partition":0},"offset":{"offset":1}}`,
			"Source partition {cluster=A, partition=0, topic=null} has an invalid value null for the 'topic' key, which must be a string"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":"0"},"offset":{"offset":1}}`,
			"Source partition {cluster=A, partition=0, topic=t} has an invalid value 0 for the 'partition' key, which must be an integer"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":1.5},"offset":{"offset":1}}`,
			"Source partition {cluster=A, partition=1.5, topic=t} has an invalid value 1.5 for the 'partition' key, which must be an integer"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":2147483648},"offset":{"offset":1}}`,
			"Source partition {cluster=A, partition=2147483648, topic=t} has an invalid value 2147483648 for the 'partition' key, which must be an integer"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":-1},"offset":{"offset":1}}`,
			"Source partition {cluster=A, partition=-1, topic=t} has an invalid value -1 for the 'partition' key, which cannot be negative"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{}}`,
			"Source offset {} for source partition {cluster=A, partition=0, topic=t} is missing the 'offset' key, which is required"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":"5"}}`,
			"Source offset {offset=5} for source partition {cluster=A, partition=0, topic=t} has an invalid value 5 for the 'offset' key, which must be an integer"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":1e2}}`,
			"Source offset {offset=100.0} for source partition {cluster=A, partition=0, topic=t} has an invalid value 100.0 for the 'offset' key, which must be an integer"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":-1}}`,
			"Source offset {offset=-1} for source partition {cluster=A, partition=0, topic=t} has an invalid value -1 for the 'offset' key, which cannot be negative"},
		{"source", `{"partition":null,"offset":{"offset":1}}`, "Source partitions may not be null"},
		{"source", `{"offset":{"offset":1}}`, "Source partitions may not be null"},
		// OffsetUtils.validateFormat: only primitive values.
		{"source", `{"partition":{"cluster":"A","topic":{"name":"t"},"partition":0},"offset":{"offset":1}}`,
			"Offsets may only contain primitive types as values, but field topic contains MAP"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":[1]}}`,
			"Offsets may only contain primitive types as values, but field offset contains ARRAY"},
		{"source", `{"partition":{"cluster":"A","topic":"t","partition":99999999999999999999},"offset":{"offset":1}}`,
			"Offsets may only contain primitive types as values, but field partition contains class java.math.BigInteger"},
		{"checkpoint", `{"partition":{"group":"g1","topic":"t","partition":0},"offset":{"offset":5}}`,
			"Source offset {offset=5} for source partition {partition=0, topic=t, group=g1} has an invalid value 5 for the 'offset' key; the only accepted value is 0"},
		{"checkpoint", `{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":0}}`,
			"Source partition {cluster=A, partition=0, topic=t} is missing the 'group' key, which is required"},
		{"heartbeat", `{"partition":{"sourceClusterAlias":"A"},"offset":{"offset":0}}`,
			"Source partition {sourceClusterAlias=A} is missing the 'targetClusterAlias' key, which is required"},
		{"heartbeat", `{"partition":{"sourceClusterAlias":"A","targetClusterAlias":"B"},"offset":{"offset":1}}`,
			"Source offset {offset=1} for source partition {sourceClusterAlias=A, targetClusterAlias=B} has an invalid value 1 for the 'offset' key; the only accepted value is 0"},
	} {
		r := f.do("PATCH", "/connectors/"+tc.connector+"/offsets", `{"offsets":[`+tc.entry+`]}`)
		requireError(t, r, http.StatusBadRequest, tc.message)
	}
	for _, name := range []string{"source", "checkpoint", "heartbeat"} {
		offs, err := f.store.Offsets(context.Background(), name)
		require.NoError(t, err)
		require.Empty(t, offs, "rejected requests leave no trace")
	}

	requireJSON(t, f.do("PATCH", "/connectors/checkpoint/offsets", `{"offsets":[{"partition":{"group":"g1","topic":"t","partition":0},"offset":{"offset":0}}]}`),
		http.StatusOK, altered)
	requireJSON(t, f.do("PATCH", "/connectors/heartbeat/offsets", `{"offsets":[{"partition":{"sourceClusterAlias":"A","targetClusterAlias":"B"},"offset":{"offset":0}}]}`),
		http.StatusOK, altered)
}

func TestOffsetsOfAConnectorWithoutRules(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	_, err := f.store.CreateConnector(context.Background(), "odd", map[string]string{"name": "odd", "connector.class": "com.example.Odd"}, store.TargetStopped)
	require.NoError(t, err)
	requireJSON(t, f.do("PATCH", "/connectors/odd/offsets", `{"offsets":[{"partition":{"file":"a"},"offset":{"position":1.5}}]}`), http.StatusOK,
		`{"message":"The Connect framework-managed offsets for this connector have been altered successfully. `+
			`However, if this connector manages offsets externally, they will need to be manually altered in the system that the connector uses."}`)
	requireJSON(t, f.do("DELETE", "/connectors/odd/offsets", ""), http.StatusOK,
		`{"message":"The Connect framework-managed offsets for this connector have been reset successfully. `+
			`However, if this connector manages offsets externally, they will need to be manually reset in the system that the connector uses."}`)
}
