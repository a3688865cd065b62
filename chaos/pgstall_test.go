package chaos

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// TestNoFalseFailover runs the cluster with the default worker TTL beside two CPU hogs and stalls PostgreSQL
// (SIGSTOP of the postmaster and every backend), alternately for 5 s and for twice the worker TTL: a stall
// longer than the TTL makes every heartbeat look older than it, which only the leader's distrust of slow
// database answers tells from dead workers. Every worker lives through it: none may be declared dead and no
// unit may move or restart. Expected: nothing missing, nothing reordered, no stale write, the same owner and
// epoch for every unit before and after. The short form runs 80 s with three stalls; -chaos.long runs 30
// minutes with a stall every 2 minutes.
func TestNoFalseFailover(t *testing.T) {
	defaultPassOnly(t)
	v := vol()
	run, every := 80*time.Second, 25*time.Second
	if *longRun {
		run, every = 30*time.Minute, 2*time.Minute
	}
	stalls := []time.Duration{5 * time.Second, 2 * workerTTL}
	s := newScenario(t, "nofalse")
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	st := s.c.awaitSpread(s.name, taskCount, v.deadline)
	before, err := s.c.assignments(s.name)
	if err != nil {
		t.Fatalf("assignments: %v", err)
	}
	t.Logf("before: assignments %s, status %s", describeAssignments(before), st.states())

	deadBefore := s.c.logCount(declaredDead)
	startHogs(t, 2)
	began := time.Now()
	var recoveries []time.Duration
	for next := began.Add(every / 2); next.Add(stalls[len(recoveries)%len(stalls)]).Before(began.Add(run)); next = next.Add(every) {
		waitFor(t.Context(), time.Until(next))
		thaw := suite.harness.freezePostgres(t)
		waitFor(t.Context(), stalls[len(recoveries)%len(stalls)])
		thaw()
		back := time.Now()
		mark := s.prod.Mark()
		recoveries = append(recoveries, s.awaitRecovery(fmt.Sprintf("stall %d", len(recoveries)+1), back, s.prod.gen, mark, v.deadline))
		if s.stuck {
			break
		}
	}
	waitFor(t.Context(), time.Until(began.Add(run)))
	after, err := s.c.assignments(s.name)
	if err != nil {
		t.Fatalf("assignments: %v", err)
	}
	res := s.finish(v.deadline)
	moved, restarted := compareAssignments(before, after)
	dead := s.c.logCount(declaredDead) - deadBefore
	t.Logf("SUMMARY %s: %.0f s beside 2 CPU hogs, %d PostgreSQL stalls of alternately %s; new records on every partition after each stall %s; worker TTL %s; units moved: %s; units re-assigned in place: %s; log lines about a worker declared dead: %d; missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), time.Since(began).Seconds(), len(recoveries), stalls, durations(recoveries), workerTTL, orNone(moved), orNone(restarted),
		dead, res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, "missing", "reordered", "stale")
	if dead > 0 || len(moved) > 0 || len(restarted) > 0 {
		t.Errorf("false failover: %d log line(s) about a worker declared dead, units moved: %s, re-assigned: %s", dead, orNone(moved), orNone(restarted))
	}
}

// startHogs starts n processes that each keep a CPU busy until the test ends.
func startHogs(t *testing.T, n int) {
	t.Helper()
	for range n {
		hog := exec.Command("sh", "-c", "while :; do :; done")
		// A hog dies with the test binary however that ends: a go test timeout runs no cleanup.
		hog.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := hog.Start(); err != nil {
			t.Fatalf("start a CPU hog: %v", err)
		}
		t.Cleanup(func() {
			_ = hog.Process.Kill()
			_ = hog.Wait()
		})
	}
	t.Logf("%d CPU hogs running", n)
}

// freezePostgres stops the private PostgreSQL with SIGSTOP, the postmaster first (so that it forks no new
// backend) and then every process it started; thaw (also run when the test ends) continues them, the
// postmaster last. Connections stay open and calls hang, as in a storage stall: nothing fails, it is all late.
func (h *harness) freezePostgres(t *testing.T) (thaw func()) {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(h.dir, "postgres.pid"))
	if err != nil {
		t.Fatalf("PostgreSQL's PID: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatalf("PostgreSQL's PID file: %v", err)
	}
	// The harness wrote the postmaster's command line beside its PID: a PID reused by another process differs.
	want, werr := os.ReadFile(filepath.Join(h.dir, "postgres.cmdline"))
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err = errors.Join(werr, err); err != nil ||
		strings.TrimSpace(string(bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '}))) != strings.TrimSpace(string(want)) {
		t.Fatalf("PID %d is not the PostgreSQL of this harness (%v)", pid, err)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP PostgreSQL: %v", err)
	}
	stopped := []int{pid}
	for _, child := range childrenOf(pid) {
		if syscall.Kill(child, syscall.SIGSTOP) == nil {
			stopped = append(stopped, child)
		}
	}
	frozenAt := time.Now()
	var once sync.Once
	thaw = func() {
		once.Do(func() {
			for i := len(stopped) - 1; i >= 0; i-- {
				if err := syscall.Kill(stopped[i], syscall.SIGCONT); err != nil && i == 0 {
					t.Errorf("SIGCONT PostgreSQL: %v", err)
				}
			}
			t.Logf("PostgreSQL (%d processes) stalled for %.1f s", len(stopped), time.Since(frozenAt).Seconds())
		})
	}
	t.Cleanup(thaw)
	return thaw
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...: comm may hold spaces, so the fields start after the last ')'.
		fields := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}
