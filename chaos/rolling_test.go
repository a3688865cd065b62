package chaos

import (
	"testing"
	"time"
)

// TestRollingRestart stops each worker in turn with SIGTERM and starts it again, records flowing throughout,
// waiting each time until the connector and all its tasks run again, spread over every worker. Every move is
// a planned hand-over (the old owner drains and commits before the new one starts).
// Expected: nothing missing, nothing duplicated, nothing reordered, no stale write.
func TestRollingRestart(t *testing.T) {
	v := vol()
	s := newScenario(t, "roll")
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)

	for _, w := range s.c.workers {
		st := s.c.awaitSpread(s.name, taskCount, v.deadline)
		t.Logf("SIGTERM %s (runs tasks %v)", w.id, st.tasksOf(w.id))
		took := w.Term(stopTimeout + 15*time.Second)
		t.Logf("%s stopped in %.1f s", w.id, took.Seconds())
		start := time.Now()
		w.Restart()
		st = s.c.awaitSpread(s.name, taskCount, v.deadline)
		t.Logf("%s restarted; every task RUNNING and spread again %.1f s later: %s", w.id, time.Since(start).Seconds(), st.states())
	}
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: %d restarts; missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), len(s.c.workers), res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, "missing", "duplicated", "reordered", "stale")
}
