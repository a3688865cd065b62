package chaos

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestTargetBrokerRestart kills -9 broker B while records flow and starts it again on its data.
// Expected: nothing missing, nothing reordered, no stale writes. Duplicates are expected (re-sent after the
// failures). While B is down the tasks say so (the target_unreachable notice), and no longer once it is back.
func TestTargetBrokerRestart(t *testing.T) {
	brokerRestartCase(t, "B", "missing", "reordered", "stale")
}

// TestTargetBrokerFrozen freezes broker B (SIGSTOP) while records flow, each time for a little longer than the
// replication producer's delivery timeout (message.timeout.ms, 2 s under this suite's 6 s worker TTL), then
// lets it go on. That is how a request in flight outlives the timeout while the broker is alive: librdkafka
// then fails the records of the request, bumps its epoch and sends the records queued behind them as soon as
// B answers, ahead of the failed ones, which the next pipeline sends again — unless the task ended the
// pipeline and purged its producer before the timeout (connectors/source/overdue.go).
// Expected: nothing missing, nothing reordered, no stale writes.
func TestTargetBrokerFrozen(t *testing.T) {
	v := vol()
	s := newScenario(t, "frzB")
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	for _, frozen := range []time.Duration{2300 * time.Millisecond, 2700 * time.Millisecond, 3100 * time.Millisecond, 3500 * time.Millisecond} {
		thaw := suite.harness.freezeKafka(t, "B")
		waitFor(t.Context(), frozen)
		thaw()
		back := time.Now()
		mark := s.prod.Mark()
		recovery := s.awaitRecovery(fmt.Sprintf("replication after B was frozen for %s", frozen), back, s.prod.gen, mark, v.deadline)
		t.Logf("B frozen for %s; new records on every partition %.1f s after it went on", frozen, recovery.Seconds())
	}
	waitFor(t.Context(), v.settle)
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: B frozen 4 times for 2.3-3.5 s; missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, "missing", "reordered", "stale")
}

// TestSourceBrokerRestart kills -9 broker A while records flow and starts it again on its data. The
// sequenced producer retries until A acknowledges; only acknowledged records are required on B, and only
// those A still has after its restart: what the single-node A lost itself no mirror could read, and it is
// reported as lost by A, not as missing.
// Expected: nothing missing, nothing reordered.
func TestSourceBrokerRestart(t *testing.T) {
	brokerRestartCase(t, "A", "missing", "reordered", "stale")
}

func brokerRestartCase(t *testing.T, cluster string, clean ...string) {
	v := vol()
	s := newScenario(t, "brk"+cluster)
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)

	traces := s.watchTraces()
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
	if cluster == "B" {
		requireTargetUnreachableNoticed(t, s, traces, v.deadline)
	}
	waitFor(t.Context(), v.settle)
	lostNote := ""
	if cluster == "A" {
		lostNote = fmt.Sprintf("; lost by broker A itself (acknowledged, then gone from A after its kill -9) %d", s.excludeLostByA())
	}
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: broker %s down %.1f s; new records on every partition %.1f s after it was back; missing %d, duplicated %d, reordered %d, stale %d%s",
		t.Name(), cluster, back.Sub(killedAt).Seconds(), recovery.Seconds(), res.Missing, res.Duplicated, res.Reordered, res.Stale, lostNote)
	expectClean(t, res, clean...)
}

// excludeLostByA stops the producer, reads the source topic on A in full, and excludes from what B must hold
// every sequence A acknowledged that A no longer has; it logs them and returns how many. A sequence missing on
// B is then kmirror's to answer for only if A still has it: this tells a broker that lost what it acknowledged
// apart from a mirror that skipped records.
func (s *scenario) excludeLostByA() int {
	s.t.Helper()
	s.prod.Stop() // every acknowledgement is in before A is compared with them
	onA, err := tailTopic(s.t, "A", s.topic, sourcePartitions).snapshot(2 * time.Minute)
	if err != nil {
		s.t.Fatalf("read %s on A: %v", s.topic, err)
	}
	acked := s.prod.expected()
	total := 0
	for p, offsets := range acked.offsets {
		has := map[int]bool{}
		for _, r := range onA[p] {
			if r.parsed && r.gen == s.prod.gen {
				has[r.seq] = true
			}
		}
		var lost []int
		var lostAt []int64
		for seq, o := range offsets {
			if acked.required(p, seq) && !has[seq] {
				lost, lostAt = append(lost, seq), append(lostAt, o)
			}
		}
		if len(lost) == 0 {
			continue
		}
		s.prod.goneFromA(p, lost)
		total += len(lost)
		first := int64(-1)
		if len(onA[p]) > 0 {
			first = onA[p][0].offset
		}
		s.t.Logf("lost by broker A itself (acknowledged, then gone from A after its kill -9): partition %d sequences %s, acknowledged at offsets %s; A holds %d records of the partition from offset %d",
			p, ranges(lost, 8), ranges(lostAt, 8), len(onA[p]), first)
	}
	if total == 0 {
		s.t.Logf("A still holds every one of the %d sequences it acknowledged: none lost by broker A itself", acked.ackedTotal())
	}
	return total
}

// targetUnreachableMention is what the target_unreachable notice says (connectors' setUnreachable).
const targetUnreachableMention = "has acknowledged no record"

// requireTargetUnreachableNoticed: the tasks said the target acknowledged nothing while it was down, and say so
// no longer now that it is back.
func requireTargetUnreachableNoticed(t *testing.T, s *scenario, traces *traceWatcher, within time.Duration) {
	t.Helper()
	if len(traces.mentioning(targetUnreachableMention)) == 0 {
		t.Errorf("no task said the target acknowledged nothing while B was down; trace lines seen: %q", traces.lines())
	}
	s.c.awaitStatus(s.name, "the target_unreachable notice cleared", within, func(st connectorStatus) bool {
		for _, tk := range st.Tasks {
			if strings.Contains(tk.Trace, targetUnreachableMention) {
				return false
			}
		}
		return true
	})
}
