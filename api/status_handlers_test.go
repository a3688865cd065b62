package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
)

const failedTrace = `java.lang.RuntimeException: boom\n\tat Example.run(Example.java:1)\n`

func TestConnectorStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connectors/c/status", ""), http.StatusNotFound, "No status found for connector c")

	// Between create and the first report, the status is 404 too; clients poll through it.
	f.create("c", sourceConfig())
	requireError(t, f.do("GET", "/connectors/c/status", ""), http.StatusNotFound, "No status found for connector c")

	f.setStatus("c", store.StateRunning, store.StateRunning, store.StateFailed)
	requireJSON(t, f.do("GET", "/connectors/c/status", ""), http.StatusOK, `{"name":"c","connector":{"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"},`+
		`"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"},{"id":1,"state":"FAILED","worker_id":"10.0.0.5:8083","trace":"`+failedTrace+`","version":"4.1.1"}],"type":"source"}`)

	// Every field of the connector object is a string (go-kafka-connect decodes it into map[string]string), the
	// KIP-891 version included; Connect 4.1.1 answers {"state":"RUNNING","worker_id":"...","version":"4.1.1"}.
	st := decode[struct {
		Connector map[string]string `json:"connector"`
	}](t, f.do("GET", "/connectors/c/status", ""))
	require.Equal(t, map[string]string{"state": "RUNNING", "worker_id": worker, "version": "4.1.1"}, st.Connector)

	f.setStatus("c", store.StateFailed)
	requireJSON(t, f.do("GET", "/connectors/c/status", ""), http.StatusOK, `{"name":"c","connector":{"state":"FAILED","worker_id":"10.0.0.5:8083","trace":"`+failedTrace+`","version":"4.1.1"},`+
		`"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"},{"id":1,"state":"FAILED","worker_id":"10.0.0.5:8083","trace":"`+failedTrace+`","version":"4.1.1"}],"type":"source"}`)

	// A connector whose class is unknown reports type "unknown" and no version (KIP-891 leaves out an undefined one).
	_, err := f.store.CreateConnector(context.Background(), "odd", map[string]string{"name": "odd", "connector.class": "com.example.Odd"}, store.TargetStarted)
	require.NoError(t, err)
	f.setStatus("odd", store.StateUnassigned)
	requireJSON(t, f.do("GET", "/connectors/odd/status", ""), http.StatusOK,
		`{"name":"odd","connector":{"state":"UNASSIGNED","worker_id":"10.0.0.5:8083"},"tasks":[],"type":"unknown"}`)
	requireJSON(t, f.do("GET", "/connectors/odd", ""), http.StatusOK,
		`{"name":"odd","config":{"connector.class":"com.example.Odd","name":"odd"},"tasks":[],"type":"unknown"}`)
}

func TestTaskStatus(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connectors/c/tasks/0/status", ""), http.StatusNotFound, "No status found for task c-0")
	f.create("c", sourceConfig())
	f.setStatus("c", store.StateRunning, store.StateRunning, store.StateFailed)

	requireJSON(t, f.do("GET", "/connectors/c/tasks/0/status", ""), http.StatusOK, `{"id":0,"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"}`)
	requireJSON(t, f.do("GET", "/connectors/c/tasks/1/status", ""), http.StatusOK,
		`{"id":1,"state":"FAILED","worker_id":"10.0.0.5:8083","trace":"`+failedTrace+`","version":"4.1.1"}`)
	requireError(t, f.do("GET", "/connectors/c/tasks/2/status", ""), http.StatusNotFound, "No status found for task c-2")
	// The connector's own status is not a task.
	requireError(t, f.do("GET", "/connectors/c/tasks/-1/status", ""), http.StatusNotFound, "No status found for task c--1")
	// A task id that is not an integer matches no route in Jersey.
	requireError(t, f.do("GET", "/connectors/c/tasks/one/status", ""), http.StatusNotFound, "HTTP 404 Not Found")
}
