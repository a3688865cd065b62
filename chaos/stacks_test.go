package chaos

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// dumpStacks writes what every running worker is waiting for beside its log, once per cluster: its goroutines
// (from its pprof listener) in <id>-<time>.goroutines, its threads' native stacks (gdb, when installed) in
// <id>-<time>.threads, and PostgreSQL's processes and sessions in postgres-<time>.txt. A replication that
// stopped moving without an error says nothing in its log; its stacks say which call it is blocked in,
// including calls into librdkafka and PostgreSQL.
func (c *cluster) dumpStacks(why string) {
	if c.dumped {
		return
	}
	c.dumped = true
	at := time.Now().Format("150405") // a test run again (-count) keeps the earlier runs' stacks
	for _, w := range c.workers {
		if !w.running() {
			continue
		}
		base := strings.TrimSuffix(w.logPath, ".log") + "-" + at
		if err := w.saveGoroutines(base + ".goroutines"); err != nil {
			c.t.Logf("goroutines of %s: %v", w.id, err)
		}
		if err := w.saveThreads(base + ".threads"); err != nil {
			c.t.Logf("threads of %s: %v", w.id, err)
		}
		c.t.Logf("stacks of %s (%s) saved in %s.goroutines and .threads", w.id, why, base)
	}
	if len(c.workers) > 0 {
		path := filepath.Join(filepath.Dir(c.workers[0].logPath), "postgres-"+at+".txt")
		if err := c.savePostgres(path); err != nil {
			c.t.Logf("PostgreSQL's sessions: %v", err)
		}
	}
}

// savePostgres writes the state of PostgreSQL's processes (a backend left stopped shows T) and of the
// database's sessions: a statement that never returns waits on one of them.
func (c *cluster) savePostgres(path string) error {
	var b strings.Builder
	if raw, err := os.ReadFile(filepath.Join(suite.harness.dir, "postgres.pid")); err == nil {
		out, _ := exec.Command("ps", "-o", "pid,stat,wchan:32,etime,args", "--ppid", strings.TrimSpace(string(raw))).CombinedOutput()
		b.Write(out)
	}
	b.WriteString("\npid\tstate\twait\tbackend\txact_start\tquery_start\tquery\n")
	err := c.query(c.t.Context(), `select pid, coalesce(state, ''), coalesce(wait_event_type || ':' || wait_event, ''),
		coalesce(backend_type, ''), coalesce(xact_start::text, ''), coalesce(query_start::text, ''), left(coalesce(query, ''), 160)
		from pg_stat_activity where datname = current_database()`, nil, func(rows pgx.Rows) error {
		var pid int
		var state, wait, backend, xact, started, query string
		if err := rows.Scan(&pid, &state, &wait, &backend, &xact, &started, &query); err != nil {
			return err
		}
		fmt.Fprintf(&b, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", pid, state, wait, backend, xact, started, strings.Join(strings.Fields(query), " "))
		return nil
	})
	if werr := os.WriteFile(path, []byte(b.String()), 0o644); err == nil {
		err = werr
	}
	return err
}

func (w *worker) saveGoroutines(path string) error {
	ctx, cancel := context.WithTimeout(w.t.Context(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+w.pprofAddr+"/debug/pprof/goroutine?debug=2", nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, resp.Body)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// saveThreads attaches gdb for a moment: the process pauses while it reads the stacks.
func (w *worker) saveThreads(path string) error {
	gdb, err := exec.LookPath("gdb")
	if err != nil {
		return fmt.Errorf("gdb not installed: %w", err)
	}
	w.mu.Lock()
	pid := w.cmd.Process.Pid
	w.mu.Unlock()
	ctx, cancel := context.WithTimeout(w.t.Context(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, gdb, "-p", strconv.Itoa(pid), "-batch", "-nx", "-ex", "thread apply all bt").CombinedOutput()
	if werr := os.WriteFile(path, out, 0o644); err == nil {
		err = werr
	}
	return err
}

// saveSlowStop is for a worker still stopping near the end of its stop budget: a unit that does not stop is
// blocked in a call, which its stacks name. The threads go to <id>.threads; SIGQUIT then makes the Go runtime
// write every goroutine into the log and exit.
func (w *worker) saveSlowStop() {
	path := strings.TrimSuffix(w.logPath, ".log") + ".threads"
	if err := w.saveThreads(path); err != nil {
		w.t.Logf("threads of %s: %v", w.id, err)
	}
	w.t.Logf("worker %s still stopping %s after SIGTERM: its threads are in %s, its goroutines at the end of its log",
		w.id, stopTimeout-2*time.Second, path)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.cmd != nil && !isClosed(w.exited) {
		_ = w.cmd.Process.Signal(syscall.SIGQUIT)
	}
}
