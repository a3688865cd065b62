package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/server"
)

func ms(v int64) *int64 { return &v }

func TestLoggersListsEveryNamedLogger(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	l, err := server.NewLoggers(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelDebug - 4}), "info")
	require.NoError(t, err)
	tasks := l.Logger("kmirror.tasks")
	l.Logger("kmirror.tasks.source")
	l.Logger("kmirror.api")

	// Root and every logger handed out, at the level they inherit, never modified.
	require.Equal(t, map[string]api.LoggerLevel{
		"root":                 {Level: "INFO"},
		"kmirror.api":          {Level: "INFO"},
		"kmirror.tasks":        {Level: "INFO"},
		"kmirror.tasks.source": {Level: "INFO"},
	}, l.Levels())
	root, ok := l.Level("ROOT")
	require.True(t, ok)
	require.Equal(t, api.LoggerLevel{Level: "INFO"}, root)
	_, ok = l.Level("kmirror")
	require.False(t, ok, "an ancestor nobody created is unknown, as in log4j2")

	// A change reaches the descendants; only the loggers it changed get a last_modified.
	changed, err := l.SetAt("kmirror.tasks", "debug", 1000)
	require.NoError(t, err)
	require.Equal(t, []string{"kmirror.tasks", "kmirror.tasks.source"}, changed)
	require.Equal(t, map[string]api.LoggerLevel{
		"root":                 {Level: "INFO"},
		"kmirror.api":          {Level: "INFO"},
		"kmirror.tasks":        {Level: "DEBUG", LastModified: ms(1000)},
		"kmirror.tasks.source": {Level: "DEBUG", LastModified: ms(1000)},
	}, l.Levels())
	tasks.Debug("now visible")
	require.Contains(t, out.String(), "now visible")

	// The same level again changes nothing, so nothing is reported and the times stay.
	changed, err = l.SetAt("kmirror.tasks", "DEBUG", 2000)
	require.NoError(t, err)
	require.Equal(t, []string{}, changed)
	require.Equal(t, ms(1000), l.Levels()["kmirror.tasks"].LastModified)

	// Descendants are matched on dotted names: kmirror.task is not an ancestor of kmirror.tasks. The new name
	// is created at the level it sets.
	changed, err = l.SetAt("kmirror.task", "ERROR", 2500)
	require.NoError(t, err)
	require.Equal(t, []string{"kmirror.task"}, changed)
	require.Equal(t, "DEBUG", l.Levels()["kmirror.tasks"].Level)

	// An unknown ancestor is created by the change, as log4j2 creates it, and is listed from then on.
	changed, err = l.SetAt("kmirror", "WARN", 3000)
	require.NoError(t, err)
	require.Equal(t, []string{"kmirror", "kmirror.api", "kmirror.task", "kmirror.tasks", "kmirror.tasks.source"}, changed)
	tasks.Info("now hidden")
	require.NotContains(t, out.String(), "now hidden")

	// A name created at the level it already inherits is listed but not modified (Connect compares with the
	// level the new logger inherits).
	changed, err = l.SetAt("com.example", "INFO", 4000)
	require.NoError(t, err)
	require.Equal(t, []string{}, changed)
	lv, ok := l.Level("com.example")
	require.True(t, ok)
	require.Equal(t, api.LoggerLevel{Level: "INFO"}, lv)

	// A logger created after its ancestor changed inherits the level but not the ancestor's last_modified.
	l.Logger("kmirror.store")
	require.Equal(t, map[string]api.LoggerLevel{
		"root":                 {Level: "INFO"},
		"com.example":          {Level: "INFO"},
		"kmirror":              {Level: "WARN", LastModified: ms(3000)},
		"kmirror.api":          {Level: "WARN", LastModified: ms(3000)},
		"kmirror.store":        {Level: "WARN"},
		"kmirror.task":         {Level: "WARN", LastModified: ms(3000)},
		"kmirror.tasks":        {Level: "WARN", LastModified: ms(3000)},
		"kmirror.tasks.source": {Level: "WARN", LastModified: ms(3000)},
	}, l.Levels())

	// Root reaches every logger, including the ones set explicitly below it.
	changed, err = l.SetAt("Root", "error", 5000)
	require.NoError(t, err)
	require.Equal(t, []string{"com.example", "kmirror", "kmirror.api", "kmirror.store", "kmirror.task", "kmirror.tasks", "kmirror.tasks.source", "root"}, changed)
	for name, lv := range l.Levels() {
		require.Equal(t, api.LoggerLevel{Level: "ERROR", LastModified: ms(5000)}, lv, name)
	}
	require.Equal(t, int64(5000), l.LastModified())

	_, err = l.SetAt("kmirror", "LOUD", 6000)
	require.EqualError(t, err, "invalid log level 'LOUD'.")
}

// loggerLevels is GET /admin/loggers of k, decoded.
func (k *kmirror) loggerLevels() map[string]api.LoggerLevel {
	k.t.Helper()
	resp, err := k.client.Get(k.url + "/admin/loggers")
	require.NoError(k.t, err)
	defer resp.Body.Close()
	require.Equal(k.t, http.StatusOK, resp.StatusCode)
	var levels map[string]api.LoggerLevel
	require.NoError(k.t, json.NewDecoder(resp.Body).Decode(&levels))
	return levels
}

func TestAdminLoggersListsKmirrorsLoggers(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	levels := k.loggerLevels()
	root := levels["root"]
	require.NotEmpty(t, root.Level)
	require.Nil(t, root.LastModified)
	var named []string
	for name, lv := range levels {
		if name == "root" {
			continue
		}
		require.True(t, strings.HasPrefix(name, "kmirror."), "logger %s", name)
		require.Equal(t, api.LoggerLevel{Level: root.Level}, lv, name)
		named = append(named, name)
	}
	for _, name := range []string{"kmirror.api", "kmirror.connectors", "kmirror.server", "kmirror.store", "kmirror.tasks"} {
		require.Contains(t, named, name)
	}

	// A PUT on the (not yet existing) ancestor reaches every kmirror logger and creates kmirror.
	code, body := k.do(http.MethodPut, "/admin/loggers/kmirror", map[string]string{"level": "OFF"})
	require.Equal(t, http.StatusOK, code)
	want := append([]any{"kmirror"}, anySlice(named)...)
	slices.SortFunc(want, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	require.Equal(t, want, body)

	levels = k.loggerLevels()
	require.Equal(t, api.LoggerLevel{Level: root.Level}, levels["root"], "root is not below kmirror")
	require.Len(t, levels, len(named)+2)
	at := levels["kmirror"].LastModified
	require.NotNil(t, at)
	require.InDelta(t, time.Now().UnixMilli(), *at, float64(time.Minute.Milliseconds()))
	for _, name := range named {
		require.Equal(t, api.LoggerLevel{Level: "OFF", LastModified: at}, levels[name], name)
	}
	code, body = k.do(http.MethodGet, "/admin/loggers/kmirror.tasks", nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "OFF", body.(map[string]any)["level"])
}

func anySlice(s []string) []any {
	out := make([]any, len(s))
	for i, v := range s {
		out[i] = v
	}
	return out
}

func TestClusterScopeLoggerLevelReachesEveryWorker(t *testing.T) {
	t.Parallel()
	a := startKmirror(t, "")
	b := startKmirror(t, a.dbURL)
	rootLevel := a.loggerLevels()["root"].Level

	// Worker scope stays on the worker that got the request.
	code, body := a.do(http.MethodPut, "/admin/loggers/com.example", map[string]string{"level": "TRACE"})
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []any{"com.example"}, body)

	// Two cluster-wide changes in a row: the newer one, on the ancestor, wins on every worker.
	code, body = a.do(http.MethodPut, "/admin/loggers/kmirror.tasks?scope=cluster", map[string]string{"level": "DEBUG"})
	require.Equal(t, http.StatusNoContent, code)
	require.Nil(t, body)
	code, _ = b.do(http.MethodPut, "/admin/loggers/kmirror?scope=Cluster", map[string]string{"level": "ERROR"})
	require.Equal(t, http.StatusNoContent, code)

	applied := func(k *kmirror) bool {
		levels := k.loggerLevels()
		return levels["kmirror"].Level == "ERROR" && levels["kmirror.tasks"].Level == "ERROR"
	}
	require.Eventually(t, func() bool { return applied(a) && applied(b) }, 20*time.Second, 100*time.Millisecond)
	require.Equal(t, "TRACE", a.loggerLevels()["com.example"].Level)
	require.NotContains(t, b.loggerLevels(), "com.example")
	for _, k := range []*kmirror{a, b} {
		levels := k.loggerLevels()
		require.Equal(t, api.LoggerLevel{Level: rootLevel}, levels["root"])
		require.NotNil(t, levels["kmirror"].LastModified)
		require.Equal(t, "ERROR", levels["kmirror.api"].Level)
		require.NotNil(t, levels["kmirror.api"].LastModified)
	}

	// A worker that starts later applies the stored changes oldest first, so it ends where the others are.
	c := startKmirror(t, a.dbURL)
	require.Eventually(t, func() bool { return applied(c) }, 20*time.Second, 100*time.Millisecond)
	require.Equal(t, a.loggerLevels()["kmirror"], c.loggerLevels()["kmirror"], "same level, same last_modified")
	require.Equal(t, "ERROR", c.loggerLevels()["kmirror.store"].Level)
	require.NotContains(t, c.loggerLevels(), "com.example")
}
