package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/store/storetest"
)

// cluster is N kmirror workers sharing one fresh database of the private PostgreSQL.
type cluster struct {
	t       *testing.T
	dbURL   string
	workers []*worker
	next    int  // round-robin start for REST requests
	dumped  bool // dumpStacks has run
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// newCluster starts n workers (w1..wn) on a new database. extra flags go to every worker after runtimeArgs.
// The workers are stopped when the test ends, and the tail of each one's log is printed if it failed.
func newCluster(t *testing.T, n int, extra ...string) *cluster {
	t.Helper()
	// The binary under test migrates its own database: its migrations, not this test binary's, are the schema
	// it runs on.
	c := &cluster{t: t, dbURL: storetest.NewEmptyURL(t)}
	if out, err := exec.Command(suite.bin, "migrate", "up", "--database-url", c.dbURL).CombinedOutput(); err != nil {
		t.Fatalf("kmirror migrate up: %v\n%s", err, out)
	}
	logDir := filepath.Join(suite.dir, "logs", unsafeName.ReplaceAllString(t.Name(), "-"))
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatalf("create log dir: %v", err)
	}
	// Registered first, so it runs last: after the workers stopped, their logs are complete.
	t.Cleanup(func() {
		if !t.Failed() {
			return
		}
		for _, w := range c.workers {
			t.Logf("---- tail of %s's log (%s):\n%s", w.id, w.logPath, w.logTail(60))
		}
	})
	t.Cleanup(c.shutdown)
	args := append([]string{"--database-url", c.dbURL}, runtimeArgs...)
	args = append(args, extra...)
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("w%d", i)
		w := newWorker(t, id, filepath.Join(logDir, id+".log"), args)
		c.workers = append(c.workers, w)
		w.start()
	}
	return c
}

// shutdown stops every worker (in parallel: each may take up to its stop timeout).
func (c *cluster) shutdown() {
	start := time.Now()
	done := make(chan struct{})
	for _, w := range c.workers {
		go func() {
			w.shutdown()
			done <- struct{}{}
		}()
	}
	for range c.workers {
		<-done
	}
	c.t.Logf("workers stopped in %.1f s", time.Since(start).Seconds())
}

func (c *cluster) worker(id string) *worker {
	c.t.Helper()
	for _, w := range c.workers {
		if w.id == id {
			return w
		}
	}
	c.t.Fatalf("no worker %q", id)
	return nil
}

// logCount counts the lines containing any of subs in every worker's log.
func (c *cluster) logCount(subs []string) int {
	n := 0
	for _, w := range c.workers {
		for _, s := range subs {
			n += w.logCount(s)
		}
	}
	return n
}

// query runs a query on the cluster's database with a connection of its own (the database may have been
// restarted since the last one).
func (c *cluster) query(ctx context.Context, sql string, args []any, scan func(pgx.Rows) error) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, c.dbURL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rows, err := conn.Query(ctx, sql, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", sql, err)
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// leader returns the id of the worker holding an unexpired leader lease ("" when none does).
func (c *cluster) leader() (string, error) {
	var id string
	err := c.query(c.t.Context(), "SELECT coalesce(worker_id, '') FROM leader_lease WHERE expires_at > now()", nil,
		func(r pgx.Rows) error { return r.Scan(&id) })
	return id, err
}

// awaitLeader waits until some worker holds the leader lease and returns it.
func (c *cluster) awaitLeader(within time.Duration) *worker {
	c.t.Helper()
	deadline := time.Now().Add(within)
	for {
		id, err := c.leader()
		if err == nil && id != "" {
			return c.worker(id)
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("no leader within %s (last error: %v)", within, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// assignment is a unit's row in the assignments table: who runs it under which epoch.
type assignment struct {
	Worker string
	Epoch  int64
}

// assignments returns the connector's units (task id; -1 is the connector instance) and their owners.
func (c *cluster) assignments(name string) (map[int]assignment, error) {
	out := map[int]assignment{}
	err := c.query(c.t.Context(), "SELECT task_id, worker_id, epoch FROM assignments WHERE connector_name = $1", []any{name},
		func(r pgx.Rows) error {
			var id int
			var a assignment
			if err := r.Scan(&id, &a.Worker, &a.Epoch); err != nil {
				return err
			}
			out[id] = a
			return nil
		})
	return out, err
}

// describeAssignments renders assignments as "-1:w1@12 0:w2@13 ..." for logs.
func describeAssignments(as map[int]assignment) string {
	ids := make([]int, 0, len(as))
	for id := range as {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	var b strings.Builder
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d:%s@%d", id, as[id].Worker, as[id].Epoch)
	}
	return b.String()
}

var errNoWorker = errors.New("no running worker answered")
