package chaos

import (
	"testing"
	"time"
)

// TestKillWorker kills -9 a worker that is not the leader while records flow, and starts it again.
// Expected: nothing missing, nothing reordered, no stale write; duplicates (records in flight at the kill,
// re-sent from the committed offsets) are reported per kill.
func TestKillWorker(t *testing.T) {
	killCase(t, "killw", func(s *scenario) *worker {
		leader := s.c.awaitLeader(30 * time.Second)
		return s.otherThan(leader.id)
	})
}

// TestKillLeader kills -9 the worker holding the leader lease while records flow, and starts it again.
// Same expectations as TestKillWorker; the failover also waits for a new leader.
func TestKillLeader(t *testing.T) {
	killCase(t, "killl", func(s *scenario) *worker { return s.c.awaitLeader(30 * time.Second) })
}

func killCase(t *testing.T, prefix string, victimOf func(*scenario) *worker) {
	v := vol()
	s := newScenario(t, prefix)
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)

	var failovers []time.Duration
	var killDups, rejoinDups []int
	dups := 0
	for i := range v.iterations {
		st := s.c.awaitSpread(s.name, taskCount, v.deadline)
		victim := victimOf(s)
		t.Logf("kill %d: kill -9 %s, which runs tasks %v (%s)", i+1, victim.id, st.tasksOf(victim.id), st.states())
		killedAt := time.Now()
		victim.Kill9()
		mark := s.prod.Mark()
		failover := s.awaitRecovery("failover", killedAt, s.prod.gen, mark, workerTTL+v.deadline)
		failovers = append(failovers, failover)

		// Duplicates of the kill: everything acknowledged so far is on B, count the copies.
		res := s.auditNow(v.deadline, s.prod.expected())
		killDups = append(killDups, res.Duplicated-dups)
		dups = res.Duplicated
		if st, err := s.c.status(s.name); err == nil {
			t.Logf("kill %d: after the failover: %s", i+1, st.states())
		}

		victim.Restart()
		s.c.awaitSpread(s.name, taskCount, v.deadline)
		res = s.auditNow(v.deadline, s.prod.expected())
		rejoinDups = append(rejoinDups, res.Duplicated-dups)
		dups = res.Duplicated
		t.Logf("kill %d: failover %.1f s, %d duplicates from the kill, %d from the rejoin (hand-back)",
			i+1, failover.Seconds(), killDups[i], rejoinDups[i])
	}
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: %d kill(s); failover %s; duplicates per kill %s; duplicates per rejoin %s; worker TTL %s",
		t.Name(), v.iterations, durations(failovers), ints(killDups), ints(rejoinDups), workerTTL)
	expectClean(t, res, "missing", "reordered", "stale")
	s.requireExactResumes(v.deadline)
}
