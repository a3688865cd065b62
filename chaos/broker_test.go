package chaos

import (
	"testing"
	"time"
)

// TestTargetBrokerRestart kills -9 broker B while records flow and starts it again on its data.
// Expected: nothing missing and no stale writes. Reordering is reported, not asserted: an outage longer than
// the producer's capped delivery timeout fails queued records, and a record queued after them can still
// land first when B returns in that instant (the source task purges and pauses to make it rare; under CI
// load it was seen: 202 of 6,600 records in one run). Duplicates are expected (re-sent after the failures).
func TestTargetBrokerRestart(t *testing.T) { brokerRestartCase(t, "B", "missing", "stale") }

// TestSourceBrokerRestart kills -9 broker A while records flow and starts it again on its data. The
// sequenced producer retries until A acknowledges; only acknowledged records are required on B.
// Expected: nothing missing, nothing reordered.
func TestSourceBrokerRestart(t *testing.T) { brokerRestartCase(t, "A", "missing", "reordered", "stale") }

func brokerRestartCase(t *testing.T, cluster string, clean ...string) {
	v := vol()
	s := newScenario(t, "brk"+cluster)
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)

	killedAt := time.Now()
	suite.harness.killKafka(t, cluster)
	waitFor(t.Context(), v.outage)
	suite.harness.startKafka(t, cluster)
	back := time.Now()
	mark := s.prod.Mark()
	t.Logf("broker %s down for %.1f s (until it answered again)", cluster, back.Sub(killedAt).Seconds())
	recovery := s.awaitRecovery("replication after the restart of "+cluster, back, s.prod.gen, mark, v.deadline)
	if st, err := s.c.status(s.name); err == nil {
		t.Logf("after the restart: %s", st.states())
	}
	waitFor(t.Context(), v.settle)
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: broker %s down %.1f s; new records on every partition %.1f s after it was back; missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), cluster, back.Sub(killedAt).Seconds(), recovery.Seconds(), res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, clean...)
}
