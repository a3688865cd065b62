package chaos

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestPostgresRestart stops PostgreSQL the hard way (immediate shutdown) while records flow and starts it
// again after about 10 s. Replication does not need the database for every record, and every worker lived
// through the outage: none should be declared dead and no unit should move or restart because of it.
// Expected: nothing missing, nothing reordered, the same owner and epoch for every unit before and after.
func TestPostgresRestart(t *testing.T) {
	v := vol()
	s := newScenario(t, "pg")
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)

	st := s.c.awaitSpread(s.name, taskCount, v.deadline)
	before, err := s.c.assignments(s.name)
	if err != nil {
		t.Fatalf("assignments: %v", err)
	}
	leaderBefore, _ := s.c.leader()
	t.Logf("before: leader %s, assignments %s, status %s", leaderBefore, describeAssignments(before), st.states())

	deadBefore := s.c.logCount(declaredDead)
	killedAt := time.Now()
	suite.harness.killPostgres(t)
	killMark := s.prod.Mark()
	waitFor(t.Context(), 10*time.Second)
	// Did records produced after the kill reach B while the database was down? (The tasks could run on,
	// only their commits must wait.) Reported, not required.
	_, errDuring := s.tail.awaitPast(s.prod.gen, killMark, 0)
	suite.harness.startPostgres(t)
	back := time.Now()
	t.Logf("PostgreSQL down for %.1f s", back.Sub(killedAt).Seconds())
	mark := s.prod.Mark()
	recovery := s.awaitRecovery("replication after PostgreSQL restarted", back, s.prod.gen, mark, v.deadline)

	if s.stuck {
		st, _ = s.c.status(s.name) // what the tasks say, without waiting for a recovery that did not come
	} else {
		st = s.c.awaitRunning(s.name, taskCount, v.deadline)
	}
	after, err := s.c.assignments(s.name)
	if err != nil {
		t.Fatalf("assignments: %v", err)
	}
	leaderAfter, _ := s.c.leader()
	t.Logf("after: leader %s, assignments %s, status %s", leaderAfter, describeAssignments(after), st.states())

	waitFor(t.Context(), v.settle)
	res := s.finish(v.deadline)
	moved, restarted := compareAssignments(before, after)
	t.Logf("SUMMARY %s: PostgreSQL down %.1f s; records still replicated during the outage: %v; new records on every partition %.1f s after it was back; units moved: %s; units re-assigned in place: %s; log lines about a worker declared dead: %d; missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), back.Sub(killedAt).Seconds(), errDuring == nil, recovery.Seconds(), orNone(moved), orNone(restarted),
		s.c.logCount(declaredDead)-deadBefore, res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, "missing", "reordered")
	if len(moved) > 0 {
		t.Errorf("units moved to another worker because of the database outage (a worker was declared dead): %s", strings.Join(moved, ", "))
	}
	if len(restarted) > 0 {
		t.Errorf("units re-assigned (new epoch) on the same worker because of the database outage: %s", strings.Join(restarted, ", "))
	}
}

// declaredDead is in the runtime's log lines when a leader declares a worker dead and when a worker learns that
// it was (tasks/): informational, the assignments are the assertion.
var declaredDead = []string{"declared a worker dead", "was declared dead"}

// compareAssignments lists the units whose owner changed, and those re-assigned to the same owner.
func compareAssignments(before, after map[int]assignment) (moved, restarted []string) {
	ids := make([]int, 0, len(before))
	for id := range before {
		ids = append(ids, id)
	}
	sort.Ints(ids)
	for _, id := range ids {
		b, a := before[id], after[id]
		switch {
		case a.Worker != b.Worker:
			moved = append(moved, fmt.Sprintf("%d %s->%s", id, b.Worker, a.Worker))
		case a.Epoch != b.Epoch:
			restarted = append(restarted, fmt.Sprintf("%d on %s epoch %d->%d", id, a.Worker, b.Epoch, a.Epoch))
		}
	}
	return moved, restarted
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}
