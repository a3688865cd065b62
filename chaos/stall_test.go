package chaos

import (
	"testing"
	"time"
)

// TestStallWorker freezes a worker (SIGSTOP) for longer than the worker TTL while records flow, then lets it
// go on (SIGCONT). Its tasks must have moved to the others meanwhile, and once it resumes it must not write
// to B: whatever it still had queued or in flight would land after the new owner's records.
// Expected: nothing missing, nothing reordered, no stale write.
func TestStallWorker(t *testing.T) {
	v := vol()
	s := newScenario(t, "stall")
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)

	st := s.c.awaitSpread(s.name, taskCount, v.deadline)
	leader := s.c.awaitLeader(30 * time.Second)
	victim := s.otherThan(leader.id)
	stall := workerTTL + 6*time.Second
	t.Logf("SIGSTOP %s (runs tasks %v) for %s; worker TTL %s; %s", victim.id, st.tasksOf(victim.id), stall, workerTTL, st.states())
	stoppedAt := time.Now()
	victim.Stop()
	mark := s.prod.Mark()
	// The frozen worker's partitions get new records on B only once its tasks run elsewhere.
	s.awaitRecovery("failover from the frozen worker", stoppedAt, s.prod.gen, mark, stall)
	waitFor(t.Context(), time.Until(stoppedAt.Add(stall)))
	if st, err := s.c.status(s.name); err == nil {
		t.Logf("just before SIGCONT: %s", st.states())
	}
	victim.Cont()
	t.Logf("SIGCONT %s after %.1f s", victim.id, time.Since(stoppedAt).Seconds())

	// The resumed worker must notice that it lost its work, rejoin and get tasks again; by then whatever it
	// did right after resuming is on B.
	st = s.c.awaitSpread(s.name, taskCount, v.deadline)
	t.Logf("after the resume, tasks are spread again: %s", st.states())
	waitFor(t.Context(), v.settle)
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: stalled %s for %s (TTL %s); missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), victim.id, stall, workerTTL, res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, "missing", "reordered", "stale")
}
