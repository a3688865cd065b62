package chaos

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/tasks"
)

var (
	longRun  = flag.Bool("chaos.long", false, "larger volumes, and 5 iterations of each kill case (make chaos)")
	keepLogs = flag.Bool("chaos.keep", false, "keep the worker logs and the temp dir even when every test passed")
	binFlag  = flag.String("chaos.bin", "", "run this kmirror binary instead of building ./cmd/kmirror of the working tree")
)

// The suite's shared state, set up once by TestMain.
var (
	// suite is the private harness and the kmirror binary every test uses.
	suite struct {
		dir     string // temp dir of this run: harness/, logs/, kmirror
		harness *harness
		bin     string
	}

	// runtimeArgs are the runtime timing flags given to every worker. The worker TTL and heartbeat interval are
	// the defaults: the failovers the suite measures are those of a default deployment.
	runtimeArgs = []string{"--stop-timeout", "20s"}
	// workerTTL is how long a silent worker keeps its work: the default --worker-ttl.
	workerTTL = tasks.DefaultWorkerTTL
	// stopTimeout bounds a worker's graceful stop: the --stop-timeout above.
	stopTimeout = 20 * time.Second
)

func TestMain(m *testing.M) {
	flag.Parse()
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, nil)))
	os.Exit(runSuite(m))
}

func runSuite(m *testing.M) (code int) {
	if testing.Short() {
		// No private harness: every case skips under -short where it asks for a database or a broker.
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "kmirror-chaos-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	suite.dir = dir
	defer func() {
		if code == 0 && !*keepLogs {
			os.RemoveAll(dir)
		} else {
			fmt.Fprintf(os.Stderr, "chaos: worker logs kept in %s/logs\n", dir)
		}
	}()

	// The binary builds while the harness starts: both take a while on a cold machine.
	built := make(chan error, 1)
	go func() { built <- buildKmirror(dir) }()
	h, err := startHarness(filepath.Join(dir, "harness"))
	if h != nil {
		suite.harness = h
		defer h.down()
		defer stopOnDeadlineOrSignal(h)()
	}
	if buildErr := <-built; buildErr != nil {
		err = errors.Join(err, buildErr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	if err := h.exportEnv(); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	if err := durableCommits(h.env["KMIRROR_TEST_DATABASE_URL"]); err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		return 1
	}
	return m.Run()
}

// buildKmirror builds cmd/kmirror of the working tree into dir once: the tests need processes they can kill.
func buildKmirror(dir string) error {
	if *binFlag != "" {
		bin, err := filepath.Abs(*binFlag)
		suite.bin = bin
		return err
	}
	suite.bin = filepath.Join(dir, "kmirror")
	cmd := exec.Command("go", "build", "-o", suite.bin, "./cmd/kmirror")
	cmd.Dir = ".." // the repository root, from the package directory go test runs in
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build ./cmd/kmirror: %w\n%s", err, out)
	}
	return nil
}

// durableCommits makes the private PostgreSQL acknowledge a commit only once it is in the WAL on disk. The
// harness runs synchronous_commit=off for speed, and an immediate shutdown then loses the last ~0.5 s of
// committed transactions, which no production database does: the fault cases would test the harness.
func durableCommits(adminURL string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to the private PostgreSQL: %w", err)
	}
	defer conn.Close(ctx)
	for _, q := range []string{"ALTER SYSTEM SET synchronous_commit = on", "SELECT pg_reload_conf()"} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	return nil
}

// stopOnDeadlineOrSignal stops the harness shortly before go test's -timeout kills this process (its panic
// runs no deferred call) and on SIGINT/SIGTERM: brokers and PostgreSQL run in sessions of their own and would
// outlive the test binary. Workers need nothing: they die with it (Pdeathsig). It returns a cancel function.
func stopOnDeadlineOrSignal(h *harness) func() {
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	var deadline <-chan time.Time
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	if f := flag.Lookup("test.timeout"); f != nil {
		if d, err := time.ParseDuration(f.Value.String()); err == nil && d > time.Minute {
			timer.Reset(d - 30*time.Second)
			deadline = timer.C
		}
	}
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
		case s := <-sigs:
			fmt.Fprintf(os.Stderr, "chaos: %v: stopping the private harness\n", s)
			h.down()
			os.Exit(130)
		case <-deadline:
			fmt.Fprintln(os.Stderr, "chaos: the test timeout is 30 s away: stopping the private harness now")
			h.down()
		}
	}()
	return func() {
		signal.Stop(sigs)
		timer.Stop()
		close(done)
	}
}

// defaultPassOnly skips a case in the suite's second pass, on the Go data path (KMIRROR_TEST_DATA_PATH=go),
// unless -chaos.long: what it adds to the other cases does not depend on the data path. Exactly-once tasks and
// the flows of an active-active pair take the Go engine on either pass (a task whose partitions an opposite flow
// writes into does); a failback's translation of a shared topic is the failover package's, and the Go pass keeps
// TestFailback and TestFailoverPlanned for the operations themselves; that PostgreSQL stalls move no unit is the
// runtime's leases, which know no data path, and the Go pass keeps TestPostgresRestart for the engine's side of
// an unreachable database. It keeps the suite within CI's budget.
func defaultPassOnly(t *testing.T) {
	if os.Getenv("KMIRROR_TEST_DATA_PATH") == "go" && !*longRun {
		t.Skip("runs on the default pass: what it adds does not depend on the data path (both passes with -chaos.long)")
	}
}
