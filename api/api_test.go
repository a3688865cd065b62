package api_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// fixture is one API server on its own fresh database.
type fixture struct {
	t       *testing.T
	store   *store.Store
	loggers *fakeLoggers
	url     string
}

func newFixture(t *testing.T) *fixture {
	return newFixtureWith(t, func(*api.Config) {})
}

func newFixtureWith(t *testing.T, adjust func(*api.Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, store: storetest.New(t), loggers: newFakeLoggers()}
	cfg := api.Config{Store: f.store, Loggers: f.loggers}
	adjust(&cfg)
	srv := httptest.NewServer(api.New(cfg))
	t.Cleanup(srv.Close)
	f.url = srv.URL
	return f
}

// reply is a response, read in full.
type reply struct {
	status int
	header http.Header
	body   string
}

// do sends a request; a non-empty body is sent as application/json unless headers (name, value pairs) say
// otherwise. path is sent as is, so %2F stays escaped.
func (f *fixture) do(method, path, body string, headers ...string) reply {
	f.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.url+path, rd)
	require.NoError(f.t, err)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return reply{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// requireJSON checks the status and that the body is exactly the given JSON text.
func requireJSON(t *testing.T, r reply, status int, body string) {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.Equal(t, body, r.body)
}

// requireError checks Connect's error body.
func requireError(t *testing.T, r reply, status int, message string) {
	t.Helper()
	b, err := json.Marshal(map[string]any{"error_code": status, "message": message})
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.body), &got), "body: %s", r.body)
	require.Equal(t, status, r.status, "body: %s", r.body)
	require.Equal(t, "application/json", r.header.Get("Content-Type"))
	require.JSONEq(t, string(b), r.body)
	require.True(t, strings.HasPrefix(r.body, `{"error_code":`), "error_code comes first: %s", r.body)
}

// requireEmpty checks a success without a body.
func requireEmpty(t *testing.T, r reply, status int) {
	t.Helper()
	require.Equal(t, status, r.status, "body: %s", r.body)
	require.Empty(t, r.body)
}

func decode[T any](t *testing.T, r reply) T {
	t.Helper()
	var v T
	require.NoError(t, json.Unmarshal([]byte(r.body), &v), "body: %s", r.body)
	return v
}

// Minimal valid configs of the three MM2 connectors.
func sourceConfig() map[string]string {
	return map[string]string{
		"connector.class":                  "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":             "A",
		"target.cluster.alias":             "B",
		"source.cluster.bootstrap.servers": "a:9092",
		"target.cluster.bootstrap.servers": "b:9092",
	}
}

func withClass(cfg map[string]string, class string) map[string]string {
	cfg = maps.Clone(cfg)
	cfg["connector.class"] = class
	return cfg
}

func jsonText(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// create makes a connector through the API and checks it was created.
func (f *fixture) create(name string, cfg map[string]string) {
	f.t.Helper()
	r := f.do("POST", "/connectors", jsonText(f.t, map[string]any{"name": name, "config": cfg}))
	require.Equal(f.t, http.StatusCreated, r.status, r.body)
}

func (f *fixture) connector(name string) store.Connector {
	f.t.Helper()
	c, err := f.store.GetConnector(context.Background(), name)
	require.NoError(f.t, err)
	return c
}

const worker = "10.0.0.5:8083"

// assignAll makes the test worker own every unit, as the leader would, and claims each as its run would; it
// returns the run epochs of the claims.
func (f *fixture) assignAll() map[store.Unit]int64 {
	f.t.Helper()
	ctx := context.Background()
	session, err := f.store.RegisterWorker(ctx, worker, "http://"+worker)
	require.NoError(f.t, err)
	epoch, ok, err := f.store.AcquireLeadership(ctx, worker, time.Minute)
	require.NoError(f.t, err)
	require.True(f.t, ok)
	plan, err := f.store.LoadPlan(ctx)
	require.NoError(f.t, err)
	var changes []store.Reassignment
	for _, u := range plan.Units {
		changes = append(changes, store.Reassignment{Unit: u, WorkerID: worker})
	}
	require.NoError(f.t, f.store.ApplyReassignments(ctx, worker, epoch, changes, nil))
	work, err := f.store.WorkerWork(ctx, worker)
	require.NoError(f.t, err)
	epochs := map[store.Unit]int64{}
	for _, w := range work {
		c, err := f.store.ClaimUnit(ctx, w, session)
		require.NoError(f.t, err)
		epochs[w.Unit] = c.Epoch
	}
	return epochs
}

// setTasks installs n task configs for the connector, as its running instance would.
func (f *fixture) setTasks(name string, n int) {
	f.t.Helper()
	epochs := f.assignAll()
	var cfgs []map[string]string
	for i := range n {
		cfgs = append(cfgs, map[string]string{"task.class": "org.apache.kafka.connect.mirror.MirrorSourceTask", "task.index": string(rune('0' + i))})
	}
	unit := store.Unit{Connector: name, Task: store.ConnectorUnit}
	_, err := f.store.ReplaceTaskConfigs(context.Background(), store.Claim{Unit: unit, Epoch: epochs[unit]}, cfgs)
	require.NoError(f.t, err)
}

// setStatus gives the connector tasks with the given states (creating them) and reports the states, as the
// runtime would. A FAILED unit gets a trace.
func (f *fixture) setStatus(name, connectorState string, taskStates ...string) {
	f.t.Helper()
	if len(taskStates) > 0 {
		f.setTasks(name, len(taskStates))
	}
	epochs := f.assignAll()
	report := func(task int, state string) {
		st := store.Status{Unit: store.Unit{Connector: name, Task: task}, State: state, WorkerID: worker, Epoch: epochs[store.Unit{Connector: name, Task: task}]}
		if state == store.StateFailed {
			st.Trace = "java.lang.RuntimeException: boom\n\tat Example.run(Example.java:1)\n"
		}
		require.NoError(f.t, f.store.PutStatus(context.Background(), st))
	}
	report(store.ConnectorUnit, connectorState)
	for i, s := range taskStates {
		report(i, s)
	}
}

// fakeLoggers is the server's logger registry, in memory.
type fakeLoggers struct {
	mu     sync.Mutex
	levels map[string]api.LoggerLevel
	known  []string
}

func newFakeLoggers() *fakeLoggers {
	return &fakeLoggers{
		levels: map[string]api.LoggerLevel{"root": {Level: "INFO"}},
		known:  []string{"org.apache.kafka.connect", "org.apache.kafka.connect.mirror", "org.apache.kafka.connect.mirror.MirrorSourceTask", "root"},
	}
}

func (l *fakeLoggers) Levels() map[string]api.LoggerLevel {
	l.mu.Lock()
	defer l.mu.Unlock()
	return maps.Clone(l.levels)
}

func (l *fakeLoggers) Level(name string) (api.LoggerLevel, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if lv, ok := l.levels[name]; ok {
		return lv, true
	}
	if slices.Contains(l.known, name) {
		return api.LoggerLevel{Level: l.levels["root"].Level}, true
	}
	return api.LoggerLevel{}, false
}

func (l *fakeLoggers) Set(name, level string) ([]string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := int64(1714000000000)
	var affected []string
	for _, k := range l.known {
		if k == name || strings.HasPrefix(k, name+".") {
			affected = append(affected, k)
			l.levels[k] = api.LoggerLevel{Level: level, LastModified: &now}
		}
	}
	slices.Sort(affected)
	return affected, nil
}
