package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
)

func TestRestartConnector(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	requireError(t, f.do("POST", "/connectors/c/restart", ""), http.StatusNotFound, "Unknown connector: c")
	requireError(t, f.do("POST", "/connectors/c/restart?includeTasks=true", ""), http.StatusNotFound, "Unknown connector: c")

	f.create("c", sourceConfig())
	requireError(t, f.do("POST", "/connectors/c/restart?onlyFailed=true", ""), http.StatusNotFound, "Status for connector c not found")
	pending, err := f.store.PendingRestarts(ctx)
	require.NoError(t, err)
	require.Empty(t, pending, "a refused restart is not queued")

	// Without flags: 204 and a request for the connector instance only.
	requireEmpty(t, f.do("POST", "/connectors/c/restart", ""), http.StatusNoContent)
	requireEmpty(t, f.do("POST", "/connectors/c/restart?includeTasks=false&onlyFailed=false", ""), http.StatusNoContent)
	pending, err = f.store.PendingRestarts(ctx)
	require.NoError(t, err)
	require.Len(t, pending, 2)
	require.Equal(t, store.RestartRequest{ID: pending[0].ID, Connector: "c"}, pending[0])

	f.setStatus("c", store.StateRunning, store.StateRunning, store.StateFailed)
	running := `{"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"}`
	restarting := `{"state":"RESTARTING","worker_id":"10.0.0.5:8083","version":"4.1.1"}`
	task := func(id, state string, trace bool) string {
		s := `{"id":` + id + `,"state":"` + state + `","worker_id":"10.0.0.5:8083"`
		if trace {
			s += `,"trace":"` + failedTrace + `"`
		}
		return s + `,"version":"4.1.1"}`
	}
	for _, tc := range []struct {
		query        string
		connector    string
		task0, task1 string
		includeTasks bool
		onlyFailed   bool
	}{
		{"includeTasks=true", restarting, task("0", "RESTARTING", false), task("1", "RESTARTING", true), true, false},
		{"includeTasks=TRUE&onlyFailed=true", running, task("0", "RUNNING", false), task("1", "RESTARTING", true), true, true},
		{"onlyFailed=true", running, task("0", "RUNNING", false), task("1", "FAILED", true), false, true},
		{"includeTasks=false&onlyFailed=true&forward=true", running, task("0", "RUNNING", false), task("1", "FAILED", true), false, true},
	} {
		r := f.do("POST", "/connectors/c/restart?"+tc.query, "")
		requireJSON(t, r, http.StatusAccepted, `{"name":"c","connector":`+tc.connector+`,"tasks":[`+tc.task0+`,`+tc.task1+`],"type":"source"}`)
		pending, err := f.store.PendingRestarts(ctx)
		require.NoError(t, err)
		last := pending[len(pending)-1]
		require.Equal(t, store.RestartRequest{ID: last.ID, Connector: "c", IncludeTasks: tc.includeTasks, OnlyFailed: tc.onlyFailed}, last, tc.query)
	}

	// A failed connector restarts with onlyFailed.
	f.setStatus("c", store.StateFailed)
	r := f.do("POST", "/connectors/c/restart?onlyFailed=true&includeTasks=true", "")
	requireJSON(t, r, http.StatusAccepted, `{"name":"c","connector":{"state":"RESTARTING","worker_id":"10.0.0.5:8083","trace":"`+failedTrace+`","version":"4.1.1"},`+
		`"tasks":[`+task("0", "RUNNING", false)+`,`+task("1", "RESTARTING", true)+`],"type":"source"}`)
}

func TestRestartTask(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	requireError(t, f.do("POST", "/connectors/c/tasks/0/restart", ""), http.StatusNotFound, "Unknown connector: c")
	f.create("c", sourceConfig())
	requireError(t, f.do("POST", "/connectors/c/tasks/0/restart", ""), http.StatusNotFound, "Unknown task: c-0")
	f.setTasks("c", 2)
	requireError(t, f.do("POST", "/connectors/c/tasks/2/restart", ""), http.StatusNotFound, "Unknown task: c-2")
	requireError(t, f.do("POST", "/connectors/c/tasks/x/restart", ""), http.StatusNotFound, "HTTP 404 Not Found")

	requireEmpty(t, f.do("POST", "/connectors/c/tasks/1/restart", ""), http.StatusNoContent)
	pending, err := f.store.PendingRestarts(ctx)
	require.NoError(t, err)
	require.Len(t, pending, 1)
	require.NotNil(t, pending[0].Task)
	require.Equal(t, 1, *pending[0].Task)
	require.Equal(t, "c", pending[0].Connector)
}
