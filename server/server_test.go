package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/source"
	"github.com/kmirror/kmirror/server"
	"github.com/kmirror/kmirror/store/storetest"
	"github.com/kmirror/kmirror/tasks"
)

// kmirror is one kmirror process started in-process against the test PostgreSQL.
type kmirror struct {
	t      *testing.T
	url    string
	stop   func()
	dbURL  string
	client *http.Client
}

// startKmirror runs server.Run on a free port with a database of its own (or dbURL, to share one) until the
// test ends or stop is called; opts adjust its configuration.
func startKmirror(t *testing.T, dbURL string, opts ...func(*server.Config)) *kmirror {
	t.Helper()
	return startKmirrorWith(t, dbURL, opts...)
}

// startKmirrorWith is startKmirror with changes to the server's config (flags a test needs); nil ones are
// skipped.
func startKmirrorWith(t *testing.T, dbURL string, opts ...func(*server.Config)) *kmirror {
	t.Helper()
	if dbURL == "" {
		dbURL = storetest.NewURL(t)
	}
	level := "WARN"
	if os.Getenv("KMIRROR_TEST_LOG") != "" {
		level = "DEBUG"
	}
	loggers, err := server.NewLoggers(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}), level)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	cfg := server.Config{
		Listen: "127.0.0.1:0", DatabaseURL: dbURL, Loggers: loggers,
		// A 6 s TTL caps the producers' delivery timeout at 2 s: short for a test, long enough for a loaded
		// machine's brokers to acknowledge (a timeout restarts the pipeline, which re-sends records).
		Runtime: tasks.Config{PollInterval: time.Second, HeartbeatInterval: 500 * time.Millisecond,
			WorkerTTL: 6 * time.Second, LeaseTTL: 6 * time.Second, StopTimeout: 20 * time.Second},
		Ready: func(a string) { addr <- a },
	}
	// KMIRROR_TEST_DATA_PATH (auto, c or go: --data-path) picks the data path of every test's source tasks.
	if dp := os.Getenv("KMIRROR_TEST_DATA_PATH"); dp != "" {
		d, err := source.ParseDataPath(dp)
		require.NoError(t, err)
		cfg.DataPath = d
	}
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	scheme := "http"
	if cfg.Security.TLSCert != "" {
		scheme = "https"
	}
	go func() { done <- server.Run(ctx, cfg) }()
	var base string
	select {
	case a := <-addr:
		base = scheme + "://" + a
	case err := <-done:
		cancel()
		t.Fatalf("kmirror did not start: %v", err)
	}
	var once sync.Once
	k := &kmirror{t: t, url: base, dbURL: dbURL, client: &http.Client{Timeout: 30 * time.Second}}
	k.stop = func() {
		once.Do(func() {
			cancel()
			require.NoError(t, <-done)
		})
	}
	t.Cleanup(k.stop)
	return k
}

// do sends a request with an optional JSON body and returns the status and the decoded JSON body (nil if none).
func (k *kmirror) do(method, path string, body any) (int, any) {
	k.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(k.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, k.url+path, rd)
	require.NoError(k.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := k.client.Do(req)
	require.NoError(k.t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(k.t, err)
	var out any
	if len(raw) > 0 {
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		require.NoError(k.t, d.Decode(&out), "body: %s", raw)
	}
	return resp.StatusCode, out
}

// states returns "connector-state task-states..." from GET /connectors/{name}/status ("" on 404).
func (k *kmirror) states(name string) string {
	k.t.Helper()
	code, body := k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	if code != http.StatusOK {
		return ""
	}
	m := body.(map[string]any)
	s := m["connector"].(map[string]any)["state"].(string)
	for _, tk := range m["tasks"].([]any) {
		s += " " + tk.(map[string]any)["state"].(string)
	}
	return s
}

func (k *kmirror) awaitStates(name, want string, within time.Duration) {
	k.t.Helper()
	var last string
	if !assert.Eventually(k.t, func() bool { last = k.states(name); return last == want }, within, 50*time.Millisecond) {
		k.t.Fatalf("connector %s never reached %q (last %q)", name, want, last)
	}
}

func TestRootAndHealth(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	code, body := k.do(http.MethodGet, "/", nil)
	require.Equal(t, http.StatusOK, code)
	info := body.(map[string]any)
	require.Equal(t, server.ConnectVersion, info["version"])
	require.Regexp(t, `^\d+\.\d+\.\d+$`, info["version"], "kcctl parses version as X.Y.Z")
	require.Len(t, info["kafka_cluster_id"], 22)
	require.NotEmpty(t, info["commit"])

	require.Eventually(t, func() bool {
		code, body := k.do(http.MethodGet, "/health", nil)
		return code == http.StatusOK && body.(map[string]any)["status"] == "healthy"
	}, 20*time.Second, 50*time.Millisecond)
}

// TestTwoProcessesShareOneDatabase: any process answers any request, with the same answers.
func TestTwoProcessesShareOneDatabase(t *testing.T) {
	t.Parallel()
	k1 := startKmirror(t, "")
	k2 := startKmirror(t, k1.dbURL)
	cfg := map[string]any{"connector.class": "MirrorHeartbeatConnector", "source.cluster.alias": "X", "target.cluster.alias": "Y",
		"target.cluster.bootstrap.servers": "127.0.0.1:1", "emit.heartbeats.enabled": "false"}
	code, _ := k1.do(http.MethodPut, "/connectors/shared/config", cfg)
	require.Equal(t, http.StatusCreated, code)
	_, c1 := k1.do(http.MethodGet, "/connectors/shared", nil)
	_, c2 := k2.do(http.MethodGet, "/connectors/shared", nil)
	require.Equal(t, c1, c2)
	k2.awaitStates("shared", "RUNNING", 30*time.Second)
	require.Equal(t, "RUNNING", k1.states("shared"))

	_, i1 := k1.do(http.MethodGet, "/", nil)
	_, i2 := k2.do(http.MethodGet, "/", nil)
	require.Equal(t, i1.(map[string]any)["kafka_cluster_id"], i2.(map[string]any)["kafka_cluster_id"])
}

// tcpProxy forwards connections on a loopback port to target while it is up: a way to make a cluster's
// bootstrap address unreachable and reachable again.
type tcpProxy struct {
	addr   string
	target string
	mu     sync.Mutex
	ln     net.Listener
}

func newTCPProxy(t *testing.T, target string) *tcpProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	p := &tcpProxy{addr: addr, target: target}
	t.Cleanup(p.down)
	return p
}

func (p *tcpProxy) up(t *testing.T) {
	ln, err := net.Listen("tcp", p.addr)
	require.NoError(t, err)
	p.mu.Lock()
	p.ln = ln
	p.mu.Unlock()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				u, err := net.Dial("tcp", p.target)
				if err != nil {
					return
				}
				defer u.Close()
				go io.Copy(u, c) //nolint:errcheck
				io.Copy(c, u)    //nolint:errcheck
			}()
		}
	}()
}

func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
}
