package chaos

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
)

// newExactlyOnceScenario is newScenario on workers with exactly-once source support, a connector that requires
// it, and B read with read_committed, as a downstream consumer of exactly-once replication reads it.
func newExactlyOnceScenario(t *testing.T, prefix string, extra map[string]string) *scenario {
	t.Helper()
	topic := kafkatest.TopicName(t, prefix)
	createTopic(t, "A", topic, sourcePartitions)
	s := &scenario{t: t, name: "mm2-" + prefix, topic: topic, remote: "A." + topic, committed: true,
		extra: map[string]string{"exactly.once.support": "required", "source.consumer.isolation.level": "read_committed"}}
	for k, v := range extra {
		s.extra[k] = v
	}
	s.prod = newSeqProducer(t, topic, sourcePartitions, 1, valueSize)
	s.c = newCluster(t, workerCount, "--exactly-once-source-support", "enabled")
	return s
}

// TestExactlyOnceKillAndStall replicates with exactly-once support while records flow, and injects two faults
// into one cluster: kill -9 of a worker (with transaction.boundary=interval every 500 ms a transaction is open
// nearly all the time, so the kill lands inside one), then, once its tasks are back on it, SIGSTOP of another
// worker for longer than the worker TTL and SIGCONT. B, read with read_committed, is audited after each fault.
// Expected: nothing missing, nothing duplicated, nothing reordered, no stale write; and the offsets topic on B
// (mm2-offsets.A.internal) holds each partition's last replicated offset.
func TestExactlyOnceKillAndStall(t *testing.T) {
	v := vol()
	s := newExactlyOnceScenario(t, "eos", map[string]string{"transaction.boundary": "interval", "transaction.boundary.interval.ms": "500"})
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)

	// Fault 1: kill -9 of a worker that is not the leader, mid-transaction.
	st := s.c.awaitSpread(s.name, taskCount, v.deadline)
	leader := s.c.awaitLeader(30 * time.Second)
	victim := s.otherThan(leader.id)
	t.Logf("kill -9 %s, which runs tasks %v (%s)", victim.id, st.tasksOf(victim.id), st.states())
	killedAt := time.Now()
	victim.Kill9()
	mark := s.prod.Mark()
	failover := s.awaitRecovery("failover after kill -9", killedAt, s.prod.gen, mark, workerTTL+v.deadline)
	res := s.auditNow(v.deadline, s.prod.expected())
	killDups, killMissing := res.Duplicated, res.Missing
	t.Logf("after the kill: missing %d, duplicated %d, reordered %d, stale %d", res.Missing, res.Duplicated, res.Reordered, res.Stale)
	victim.Restart()
	s.c.awaitSpread(s.name, taskCount, v.deadline)
	res = s.auditNow(v.deadline, s.prod.expected())
	rejoinDups := res.Duplicated - killDups

	// Fault 2: SIGSTOP of another worker past the TTL: its tasks move, and once it resumes nothing it had
	// open may become visible.
	st = s.c.awaitSpread(s.name, taskCount, v.deadline)
	stalled := s.otherThan(leader.id, victim.id)
	// Longer than at-least-once's failover (TTL + ~1 s): the new owner also fences the old producer, which
	// waits for the coordinator to abort its open transaction, and reads the offsets topic.
	stall := workerTTL + 8*time.Second
	t.Logf("SIGSTOP %s (runs tasks %v) for %s; worker TTL %s", stalled.id, st.tasksOf(stalled.id), stall, workerTTL)
	stoppedAt := time.Now()
	stalled.Stop()
	mark = s.prod.Mark()
	s.awaitRecovery("failover from the frozen worker", stoppedAt, s.prod.gen, mark, stall)
	waitFor(t.Context(), time.Until(stoppedAt.Add(stall)))
	stalled.Cont()
	t.Logf("SIGCONT %s after %.1f s", stalled.id, time.Since(stoppedAt).Seconds())
	s.c.awaitSpread(s.name, taskCount, v.deadline)
	waitFor(t.Context(), v.settle)

	res = s.finish(v.deadline)
	t.Logf("SUMMARY %s: kill -9: failover %.1f s, missing %d, duplicated %d, duplicated at the rejoin %d; SIGSTOP %s: missing %d, duplicated %d (totals: missing %d, duplicated %d, reordered %d, stale %d); worker TTL %s",
		t.Name(), failover.Seconds(), killMissing, killDups, rejoinDups, stall, res.Missing-killMissing, res.Duplicated-killDups-rejoinDups,
		res.Missing, res.Duplicated, res.Reordered, res.Stale, workerTTL)
	expectClean(t, res, "missing", "duplicated", "reordered", "stale")
	s.requireCommittedOffsets(v.deadline)
}

// requireCommittedOffsets checks that the offsets topic on B, read with read_committed, ends at the last record
// A acknowledged in every partition (the producer has stopped and B has caught up).
func (s *scenario) requireCommittedOffsets(within time.Duration) {
	s.t.Helper()
	exp := s.prod.expected()
	var got map[int32]int64
	deadline := time.Now().Add(within)
	for {
		c := mm2offsets.NewCollector(s.name, "A")
		ctx, cancel := context.WithTimeout(s.t.Context(), 30*time.Second)
		_, err := kafka.ReadTopic(ctx, map[string]string{"bootstrap.servers": kafkatest.Bootstrap(s.t, "B"), "isolation.level": "read_committed"},
			mm2offsets.Topic("A"), slog.New(slog.DiscardHandler), func(r kafka.Record) error { c.Add(r.Key(), r.Value()); return nil })
		cancel()
		if err != nil {
			s.t.Fatalf("read %s on B: %v", mm2offsets.Topic("A"), err)
		}
		got = map[int32]int64{}
		for _, o := range c.Offsets() {
			if o.Source.Topic == s.topic {
				got[o.Source.Partition] = o.Offset
			}
		}
		ok := true
		for p := range sourcePartitions {
			if got[int32(p)] != exp.lastOffset(p) {
				ok = false
			}
		}
		if ok {
			s.t.Logf("the offsets topic holds every partition's last offset: %v", got)
			return
		}
		if time.Now().After(deadline) {
			s.t.Errorf("offsets topic %s: %v, want the last offsets on A", mm2offsets.Topic("A"), got)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// TestExactlyOnceRollingRestart is TestRollingRestart with exactly-once support: every worker in turn is
// stopped with SIGTERM (its tasks commit their open transaction and hand over) and started again, records
// flowing throughout. Expected: nothing missing, duplicated or reordered on B read with read_committed. It
// runs with -chaos.long only: the default suite keeps its exactly-once share to one case.
func TestExactlyOnceRollingRestart(t *testing.T) {
	if !*longRun {
		t.Skip("runs with -chaos.long")
	}
	v := vol()
	s := newExactlyOnceScenario(t, "eosroll", nil)
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	for _, w := range s.c.workers {
		st := s.c.awaitSpread(s.name, taskCount, v.deadline)
		t.Logf("SIGTERM %s (runs tasks %v)", w.id, st.tasksOf(w.id))
		took := w.Term(stopTimeout + 15*time.Second)
		t.Logf("%s stopped in %.1f s", w.id, took.Seconds())
		w.Restart()
		s.c.awaitSpread(s.name, taskCount, v.deadline)
	}
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: %d restarts; missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), len(s.c.workers), res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, "missing", "duplicated", "reordered", "stale")
	s.requireCommittedOffsets(v.deadline)
}

// TestExactlyOnceTargetBrokerRestart is TestTargetBrokerRestart with exactly-once support: broker B is killed
// -9 while records flow and started again on its data. Transactions open at the kill cannot commit: they are
// aborted (or settled by the next pipeline's InitTransactions) and replicated again from the offsets topic.
// Expected: nothing missing, duplicated or reordered on B read with read_committed, unlike at-least-once,
// which re-sends. It runs with -chaos.long only.
func TestExactlyOnceTargetBrokerRestart(t *testing.T) {
	if !*longRun {
		t.Skip("runs with -chaos.long")
	}
	v := vol()
	s := newExactlyOnceScenario(t, "eosbrk", nil)
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	killedAt := time.Now()
	suite.harness.killKafka(t, "B")
	waitFor(t.Context(), v.outage)
	suite.harness.startKafka(t, "B")
	back := time.Now()
	mark := s.prod.Mark()
	t.Logf("broker B down for %.1f s (until it answered again)", back.Sub(killedAt).Seconds())
	recovery := s.awaitRecovery("replication after the restart of B", back, s.prod.gen, mark, v.deadline)
	waitFor(t.Context(), v.settle)
	res := s.finish(v.deadline)
	t.Logf("SUMMARY %s: broker B down %.1f s; new records on every partition %.1f s after it was back; missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), back.Sub(killedAt).Seconds(), recovery.Seconds(), res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, "missing", "duplicated", "reordered", "stale")
	s.requireCommittedOffsets(v.deadline)
}
