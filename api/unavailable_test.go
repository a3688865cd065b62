package api_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

const unavailableMessage = "kmirror cannot reach its database; try again shortly"

// logRecorder is a slog.Handler that keeps every record.
type logRecorder struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (h *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (h *logRecorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *logRecorder) WithGroup(string) slog.Handler      { return h }

// records returns the records with the given message, each as its attributes plus "level".
func (h *logRecorder) records(msg string) []map[string]any {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []map[string]any
	for _, r := range h.recs {
		if r.Message != msg {
			continue
		}
		m := map[string]any{"level": r.Level}
		r.Attrs(func(a slog.Attr) bool {
			m[a.Key] = a.Value.Any()
			return true
		})
		out = append(out, m)
	}
	return out
}

// requireNoLeak checks that a response says nothing about where the database is or who kmirror is there.
func requireNoLeak(t *testing.T, r reply, secrets ...string) {
	t.Helper()
	for _, s := range append(secrets, "SQLSTATE", "failed to connect", "dial", "pgx", "pool") {
		require.NotContains(t, r.body, s, "status %d", r.status)
	}
}

// unreachableDatabaseError is what store.Open returns for a database nobody listens for: pgx's real
// connection error, whose text names the user, the database and the address.
func unreachableDatabaseError(t *testing.T) (err error, secrets []string) {
	t.Helper()
	ln, lerr := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, lerr)
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	require.NoError(t, ln.Close())
	_, err = store.Open(context.Background(), "postgres://kmirror_admin:s3cret@127.0.0.1:"+port+"/kmirror_prod",
		slog.New(slog.DiscardHandler), store.OpenOptions{ConnectTimeout: 10 * time.Millisecond})
	require.Error(t, err)
	for _, s := range []string{"kmirror_admin", "kmirror_prod", port, "127.0.0.1"} {
		require.Contains(t, err.Error(), s, "the error does carry what must not leak")
	}
	return err, []string{"kmirror_admin", "s3cret", "kmirror_prod", port, "127.0.0.1"}
}

// failingInfo serves the API with GET / failing with err (no database needed) and returns a fixture on it.
func failingInfo(t *testing.T, logs *logRecorder, err error) *fixture {
	t.Helper()
	srv := httptest.NewServer(api.New(api.Config{
		Info:   func(context.Context) (api.ServerInfo, error) { return api.ServerInfo{}, err },
		Logger: slog.New(logs),
	}))
	t.Cleanup(srv.Close)
	return &fixture{t: t, url: srv.URL}
}

func TestUnreachableDatabaseAnswers503(t *testing.T) {
	t.Parallel()
	connectErr, secrets := unreachableDatabaseError(t)
	for name, err := range map[string]error{
		"connection refused":    connectErr,
		"connection dropped":    fmt.Errorf("read cluster id: %w", io.ErrUnexpectedEOF),
		"no answer in time":     fmt.Errorf("read cluster id: %w", context.DeadlineExceeded),
		"dropped, with details": fmt.Errorf("read cluster id: %w", fmt.Errorf("kmirror_admin@127.0.0.1: %w", io.EOF)),
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			r := failingInfo(t, &logRecorder{}, err).do("GET", "/", "")
			requireError(t, r, http.StatusServiceUnavailable, unavailableMessage)
			require.Equal(t, "5", r.header.Get("Retry-After"))
			requireNoLeak(t, r, secrets...)
		})
	}
}

func TestInternalErrorIsGeneric(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("read cluster id: %w", errors.New(`ERROR: relation "kmirror_cluster" does not exist (SQLSTATE 42P01)`))
	r := failingInfo(t, &logRecorder{}, err).do("GET", "/", "")
	requireError(t, r, http.StatusInternalServerError, "Internal server error while handling GET /; see the worker's log")
	require.Empty(t, r.header.Get("Retry-After"))
	requireNoLeak(t, r, "kmirror_cluster", "relation")

	// The message names the request as the client sent it.
	f := newFixtureWith(t, func(c *api.Config) { c.Loggers = failingLoggers{newFakeLoggers()} })
	requireError(t, f.do("PUT", "/admin/loggers/org.apache.kafka.connect", `{"level":"DEBUG"}`), http.StatusInternalServerError,
		"Internal server error while handling PUT /admin/loggers/org.apache.kafka.connect; see the worker's log")
}

// failingLoggers fails every level change, as a logger tree with a bug would.
type failingLoggers struct{ *fakeLoggers }

func (failingLoggers) Set(string, string) ([]string, error) {
	return nil, errors.New("logger tree is corrupt")
}

// TestInternalErrorsStayInTheLog: the text the client does not get is logged, and an outage's identical
// failures are logged once per interval rather than once per request.
func TestInternalErrorsStayInTheLog(t *testing.T) {
	t.Parallel()
	connectErr, _ := unreachableDatabaseError(t)
	logs := &logRecorder{}
	f := failingInfo(t, logs, connectErr)
	for range 20 {
		require.Equal(t, http.StatusServiceUnavailable, f.do("GET", "/", "").status)
	}
	recs := logs.records("request failed")
	require.Len(t, recs, 1, "one line for 20 identical failures within the interval")
	require.Equal(t, slog.LevelWarn, recs[0]["level"])
	require.Equal(t, "GET", recs[0]["method"])
	require.Equal(t, "/", recs[0]["path"])
	require.Equal(t, int64(http.StatusServiceUnavailable), recs[0]["status"])
	require.Equal(t, connectErr, recs[0]["error"], "the log has the whole error")

	logs = &logRecorder{}
	internal := errors.New("cluster id unavailable")
	f = failingInfo(t, logs, internal)
	for range 3 {
		require.Equal(t, http.StatusInternalServerError, f.do("GET", "/", "").status)
	}
	recs = logs.records("request failed")
	require.Len(t, recs, 1)
	require.Equal(t, slog.LevelError, recs[0]["level"])
	require.Equal(t, int64(http.StatusInternalServerError), recs[0]["status"])
	require.Equal(t, internal, recs[0]["error"])
}

// tcpProxy forwards connections to PostgreSQL until stopped, which to the Store behind it is the database
// going away: established connections break and new ones are refused.
type tcpProxy struct {
	t      *testing.T
	target string
	addr   string

	mu    sync.Mutex
	ln    net.Listener
	conns []net.Conn
}

func startProxy(t *testing.T, target string) *tcpProxy {
	t.Helper()
	p := &tcpProxy{t: t, target: target}
	p.listen("127.0.0.1:0")
	t.Cleanup(p.stop)
	return p
}

func (p *tcpProxy) listen(addr string) {
	p.t.Helper()
	ln, err := net.Listen("tcp", addr)
	require.NoError(p.t, err)
	p.mu.Lock()
	p.ln, p.addr = ln, ln.Addr().String()
	p.mu.Unlock()
	go p.accept(ln)
}

func (p *tcpProxy) accept(ln net.Listener) {
	for {
		down, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("tcp", p.target)
		if err != nil {
			down.Close()
			continue
		}
		p.mu.Lock()
		if p.ln != ln { // stopped meanwhile
			p.mu.Unlock()
			down.Close()
			up.Close()
			return
		}
		p.conns = append(p.conns, down, up)
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go pipe(up, down)
		go pipe(down, up)
	}
}

// stop closes the listener and every connection.
func (p *tcpProxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ln != nil {
		p.ln.Close()
		p.ln = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// restart listens again on the same address.
func (p *tcpProxy) restart() { p.listen(p.addr) }

// TestDatabaseOutage cuts a running API off its real database: every request that needs it gets 503 with no
// trace of the database's address, user or name, /health says unhealthy with only the cause, the log gets one
// line, and requests succeed again once the database is back.
func TestDatabaseOutage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	direct, err := url.Parse(storetest.NewURL(t))
	require.NoError(t, err)
	proxy := startProxy(t, direct.Host)
	viaProxy := *direct
	viaProxy.Host = proxy.addr
	st, err := store.Open(ctx, viaProxy.String(), slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(st.Close)

	logs := &logRecorder{}
	srv := httptest.NewServer(api.New(api.Config{Store: st, Logger: slog.New(logs)}))
	t.Cleanup(srv.Close)
	f := &fixture{t: t, store: st, url: srv.URL}
	f.create("mm2", sourceConfig())

	proxy.stop()
	_, proxyPort, _ := net.SplitHostPort(proxy.addr)
	_, pgPort, _ := net.SplitHostPort(direct.Host)
	secrets := []string{"127.0.0.1", proxyPort, pgPort, direct.User.Username(), strings.TrimPrefix(direct.Path, "/")}

	for _, req := range [][3]string{
		{"GET", "/", ""},
		{"GET", "/connectors", ""},
		{"GET", "/connectors?expand=status", ""},
		{"GET", "/connectors/mm2", ""},
		{"GET", "/connectors/mm2/status", ""},
		{"GET", "/connectors/mm2/offsets", ""},
		{"PUT", "/connectors/mm2/pause", ""},
		{"DELETE", "/connectors/mm2", ""},
		{"POST", "/connectors", jsonText(t, map[string]any{"name": "other", "config": sourceConfig()})},
	} {
		r := f.do(req[0], req[1], req[2])
		requireError(t, r, http.StatusServiceUnavailable, unavailableMessage)
		require.Equal(t, "5", r.header.Get("Retry-After"), "%s %s", req[0], req[1])
		requireNoLeak(t, r, secrets...)
	}

	health := f.do("GET", "/health", "")
	requireJSON(t, health, http.StatusInternalServerError, `{"status":"unhealthy","message":"Worker was unable to handle this `+
		`request and may be unable to handle other requests. Database unreachable."}`)
	requireNoLeak(t, health, secrets...)

	recs := logs.records("request failed")
	require.Len(t, recs, 1, "an outage is one log line per interval, not one per request")
	require.Equal(t, "GET", recs[0]["method"])
	require.Equal(t, "/", recs[0]["path"])
	require.Len(t, logs.records("health check failed"), 1)

	proxy.restart()
	require.Eventually(t, func() bool {
		return f.do("GET", "/connectors/mm2", "").status == http.StatusOK
	}, 10*time.Second, 50*time.Millisecond, "the API recovers with the database")
	requireJSON(t, f.do("GET", "/connectors", ""), http.StatusOK, `["mm2"]`)
}
