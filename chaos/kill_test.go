package chaos

import (
	"testing"
	"time"
)

// TestKillWorker kills -9 a worker that is not the leader while records flow, and starts it again.
// Expected: nothing missing, nothing reordered, no stale write; and duplicates, reported per kill: it is the
// at-least-once counterpart of TestExactlyOnceKillAndStall's kill -9, and asserts that the kill does
// duplicate, so that the audit that finds none under exactly-once is known to see them. A kill duplicates
// what the victim's tasks wrote to B since their last offset commit (every 100 ms) and what they had in
// flight. Each kill waits until every partition gets new records on B first: tasks just handed back at a
// rejoin are RUNNING before they write, and killing them duplicated nothing (2 of 5 kills in a run killed
// five times; 5 of 37 single-kill runs in the suite's logs before). With that wait, 10 of 10 kills in two
// such runs duplicated (2 to 131 records). A kill that still lands just after a commit with nothing in
// flight would duplicate nothing, so while no kill has, the case kills again, at most maxExtraKills more
// times (about 15 s each).
func TestKillWorker(t *testing.T) {
	killCase(t, "killw", true, func(s *scenario) *worker {
		leader := s.c.awaitLeader(30 * time.Second)
		return s.otherThan(leader.id)
	})
}

// TestKillLeader kills -9 the worker holding the leader lease while records flow, and starts it again.
// Same expectations as TestKillWorker, except that duplicates are only reported; the failover also waits for
// a new leader.
func TestKillLeader(t *testing.T) {
	killCase(t, "killl", false, func(s *scenario) *worker { return s.c.awaitLeader(30 * time.Second) })
}

// maxExtraKills bounds the kills TestKillWorker adds while no kill has duplicated yet.
const maxExtraKills = 4

// killCase kills -9 the worker victimOf picks, vol().iterations times; wantDups requires duplicates of the
// kills (killing again while there are none, at most maxExtraKills times).
func killCase(t *testing.T, prefix string, wantDups bool, victimOf func(*scenario) *worker) {
	v := vol()
	s := newScenario(t, prefix)
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)

	var failovers []time.Duration
	var killDups, rejoinDups []int
	dups := 0
	kill := func(i int) {
		st := s.c.awaitSpread(s.name, taskCount, v.deadline)
		// The tasks handed back at the last rejoin are RUNNING before they replicate: a kill must land on
		// tasks that write, or it tests only their start-up (and duplicates nothing).
		s.awaitFlowing(v.deadline)
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
	for i := range v.iterations {
		kill(i)
	}
	for extra := 0; wantDups && sum(killDups) == 0 && extra < maxExtraKills && !t.Failed(); extra++ {
		t.Logf("no duplicate from %d kill(s) yet: killing again (%d of at most %d more)", len(killDups), extra+1, maxExtraKills)
		kill(len(killDups))
	}
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: %d kill(s); failover %s; duplicates per kill %s; duplicates per rejoin %s; worker TTL %s",
		t.Name(), len(failovers), durations(failovers), ints(killDups), ints(rejoinDups), workerTTL)
	expectClean(t, res, "missing", "reordered", "stale")
	if wantDups && sum(killDups) == 0 {
		t.Errorf("at-least-once: %d kills -9 duplicated no record on B: the audit cannot show what exactly-once prevents", len(killDups))
	}
	s.requireExactResumes(v.deadline)
}

func sum(xs []int) int {
	n := 0
	for _, x := range xs {
		n += x
	}
	return n
}
