package api_test

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/store"
)

// privatePostgres is a PostgreSQL server of the test's own, from the binaries the harness uses, so the test can
// stop and start it without disturbing the shared one every other test uses.
type privatePostgres struct {
	t       *testing.T
	bin     string
	dir     string
	port    int
	asOwner func(name string, args ...string) *exec.Cmd
}

// pgBin finds the PostgreSQL server binaries as scripts/harness does: $PG_BIN, else the newest
// /usr/lib/postgresql/N/bin.
func pgBin(t *testing.T) string {
	t.Helper()
	if b := os.Getenv("PG_BIN"); b != "" {
		return b
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool {
		vi, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[i])))
		vj, _ := strconv.Atoi(filepath.Base(filepath.Dir(dirs[j])))
		return vi > vj
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "pg_ctl")); err == nil {
			return d
		}
	}
	t.Fatal("PostgreSQL server binaries not found (set PG_BIN; scripts/harness prereqs says what to install)")
	return ""
}

func startPrivatePostgres(t *testing.T) *privatePostgres {
	t.Helper()
	p := &privatePostgres{t: t, bin: pgBin(t), asOwner: exec.Command}
	// Not t.TempDir(): the server runs as the postgres user when the test runs as root (initdb refuses root),
	// and must be able to enter the directory.
	dir, err := os.MkdirTemp("", "kmirror-pg-stop-")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o755))
	p.dir = dir
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		require.NoError(t, err, "running as root needs the postgres user (the postgresql package creates it)")
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		require.NoError(t, os.Chown(dir, uid, gid))
		p.asOwner = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p.port = ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())

	p.run("initdb", "-D", p.data(), "-U", "postgres", "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
	conf := fmt.Sprintf("\nlisten_addresses = '127.0.0.1'\nport = %d\nunix_socket_directories = '%s'\nfsync = off\n"+
		"synchronous_commit = off\nlog_min_messages = warning\n", p.port, dir)
	f, err := os.OpenFile(filepath.Join(p.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(conf)
	require.NoError(t, err)
	require.NoError(t, f.Close())
	p.start()
	t.Cleanup(func() { _ = p.cmd("pg_ctl", "-D", p.data(), "-m", "immediate", "-w", "stop").Run() })
	return p
}

func (p *privatePostgres) data() string { return filepath.Join(p.dir, "data") }

func (p *privatePostgres) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.port)
}

func (p *privatePostgres) cmd(name string, args ...string) *exec.Cmd {
	c := p.asOwner(filepath.Join(p.bin, name), args...)
	c.Dir = "/" // the postgres user may not enter the test's working directory
	return c
}

func (p *privatePostgres) run(name string, args ...string) {
	p.t.Helper()
	out, err := p.cmd(name, args...).CombinedOutput()
	require.NoError(p.t, err, "%s %s: %s", name, strings.Join(args, " "), out)
}

// start starts the server and waits (pg_ctl -w) until it accepts connections.
func (p *privatePostgres) start() {
	p.t.Helper()
	p.run("pg_ctl", "-D", p.data(), "-l", filepath.Join(p.dir, "postgres.log"), "-w", "-t", "60", "start")
}

// stop stops it in the given mode: "fast" tells each session it is shutting down (57P01), "immediate" drops
// them as a crash would; -w returns once it is gone.
func (p *privatePostgres) stop(mode string) {
	p.t.Helper()
	p.run("pg_ctl", "-D", p.data(), "-m", mode, "-w", "-t", "60", "stop")
}

// TestPostgresStopped stops a real PostgreSQL under a running API, both ways it can go (an orderly fast
// shutdown and an immediate one, as in a crash): every request that needs the database gets 503 with the
// short message and no trace of the database's address, port, user or name, including the first ones, which
// meet the pool's now-dead connections; once PostgreSQL is back the same requests succeed.
// (TestDatabaseOutage cuts the network to the database instead; chaos/TestPostgresRestart checks replication
// across a restart.)
func TestPostgresStopped(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL of its own: skipped under -short, the suite without brokers or PostgreSQL")
	}
	t.Parallel()
	pg := startPrivatePostgres(t)
	ctx := context.Background()
	st, err := store.Open(ctx, pg.url(), slog.New(slog.DiscardHandler), store.OpenOptions{ConnectTimeout: 5 * time.Second})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	_, err = st.Migrate(ctx)
	require.NoError(t, err)
	srv := httptest.NewServer(api.New(api.Config{Store: st, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	f := &fixture{t: t, store: st, url: srv.URL}
	f.create("mm2", sourceConfig())
	// Use the pool's connections before each stop, so that the stop breaks open ones too.
	requests := [][3]string{
		{"GET", "/connectors", ""},
		{"GET", "/connectors/mm2", ""},
		{"GET", "/connectors/mm2/status", ""},
		{"GET", "/connectors/mm2/offsets", ""},
		{"PUT", "/connectors/mm2/pause", ""},
		{"POST", "/connectors", jsonText(t, map[string]any{"name": "other", "config": sourceConfig()})},
		{"DELETE", "/connectors/mm2", ""},
	}
	secrets := []string{"127.0.0.1", strconv.Itoa(pg.port), "postgres", "SQLSTATE", "57P0", "terminating connection"}

	for _, mode := range []string{"fast", "immediate"} {
		require.Equal(t, http.StatusOK, f.do("GET", "/connectors/mm2", "").status, mode)
		pg.stop(mode)
		for _, req := range requests {
			r := f.do(req[0], req[1], req[2])
			requireError(t, r, http.StatusServiceUnavailable, unavailableMessage)
			require.Equal(t, "5", r.header.Get("Retry-After"), "%s stop: %s %s", mode, req[0], req[1])
			requireNoLeak(t, r, secrets...)
		}
		pg.start()
		require.Eventually(t, func() bool {
			return f.do("GET", "/connectors/mm2", "").status == http.StatusOK
		}, 30*time.Second, 50*time.Millisecond, "the API recovers once PostgreSQL is back (%s stop)", mode)
		requireJSON(t, f.do("GET", "/connectors", ""), http.StatusOK, `["mm2"]`)
	}
}
