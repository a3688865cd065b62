package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/store"
)

func TestLoggers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireJSON(t, f.do("GET", "/admin/loggers", ""), http.StatusOK, `{"root":{"level":"INFO","last_modified":null}}`)
	requireJSON(t, f.do("GET", "/admin/loggers/ROOT", ""), http.StatusOK, `{"level":"INFO","last_modified":null}`)
	requireJSON(t, f.do("GET", "/admin/loggers/org.apache.kafka.connect.mirror", ""), http.StatusOK, `{"level":"INFO","last_modified":null}`)
	requireError(t, f.do("GET", "/admin/loggers/com.example", ""), http.StatusNotFound, "Logger com.example not found.")

	// Worker scope (the default, also for unknown scopes): the affected loggers, sorted.
	requireJSON(t, f.do("PUT", "/admin/loggers/org.apache.kafka.connect.mirror", `{"level":"debug"}`), http.StatusOK,
		`["org.apache.kafka.connect.mirror","org.apache.kafka.connect.mirror.MirrorSourceTask"]`)
	requireJSON(t, f.do("GET", "/admin/loggers/org.apache.kafka.connect.mirror", ""), http.StatusOK, `{"level":"DEBUG","last_modified":1714000000000}`)
	requireJSON(t, f.do("PUT", "/admin/loggers/org.apache.kafka.connect?scope=galaxy", `{"level":"WARN"}`), http.StatusOK,
		`["org.apache.kafka.connect","org.apache.kafka.connect.mirror","org.apache.kafka.connect.mirror.MirrorSourceTask"]`)
	requireJSON(t, f.do("PUT", "/admin/loggers/com.example?scope=worker", `{"level":"WARN"}`), http.StatusOK, `[]`)

	requireError(t, f.do("PUT", "/admin/loggers/root", `{"levels":"INFO"}`), http.StatusBadRequest, "Desired 'level' parameter was not specified in request.")
	requireError(t, f.do("PUT", "/admin/loggers/root", `{"level":null}`), http.StatusBadRequest, "Desired 'level' parameter was not specified in request.")
	requireError(t, f.do("PUT", "/admin/loggers/root", `{"level":"LOUD"}`), http.StatusNotFound, "invalid log level 'LOUD'.")

	// Cluster scope stores the level for every worker and answers 204.
	requireEmpty(t, f.do("PUT", "/admin/loggers/Root?scope=CLUSTER", `{"level":"error"}`), http.StatusNoContent)
	levels, err := f.store.LoggerLevels(context.Background())
	require.NoError(t, err)
	require.Len(t, levels, 1)
	require.Equal(t, "root", levels[0].Logger)
	require.Equal(t, "ERROR", levels[0].Level)
	require.Positive(t, levels[0].LastModified)
	require.Equal(t, "INFO", f.loggers.Levels()["root"].Level, "cluster scope does not touch this worker directly")
	requireError(t, f.do("PUT", "/admin/loggers/root?scope=cluster", `{"level":"LOUD"}`), http.StatusNotFound, "invalid log level 'LOUD'.")
	levels, err = f.store.LoggerLevels(context.Background())
	require.NoError(t, err)
	require.Equal(t, []store.LoggerLevel{{Logger: "root", Level: "ERROR", LastModified: levels[0].LastModified}}, levels)
}

func TestLoggersDisabled(t *testing.T) {
	t.Parallel()
	f := newFixtureWith(t, func(c *api.Config) { c.Loggers = nil })
	requireError(t, f.do("GET", "/admin/loggers", ""), http.StatusNotFound, "HTTP 404 Not Found")
	requireError(t, f.do("GET", "/admin/loggers/root", ""), http.StatusNotFound, "HTTP 404 Not Found")
	requireError(t, f.do("PUT", "/admin/loggers/root", `{"level":"INFO"}`), http.StatusNotFound, "HTTP 404 Not Found")
}
