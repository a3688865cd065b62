package chaos

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
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
	return newExactlyOnceScenarioWith(t, prefix, extra, func(topic string) *seqProducer {
		return newSeqProducer(t, topic, sourcePartitions, 1, valueSize)
	})
}

// newExactlyOnceScenarioWith is newExactlyOnceScenario with the source topic's producer that newProducer
// creates (a transactional one, newTxnSeqProducer).
func newExactlyOnceScenarioWith(t *testing.T, prefix string, extra map[string]string, newProducer func(topic string) *seqProducer) *scenario {
	t.Helper()
	topic := kafkatest.TopicName(t, prefix)
	createTopic(t, "A", topic, sourcePartitions)
	s := &scenario{t: t, name: "mm2-" + prefix, topic: topic, remote: "A." + topic, committed: true,
		extra: map[string]string{"exactly.once.support": "required", "source.consumer.isolation.level": "read_committed"}}
	for k, v := range extra {
		s.extra[k] = v
	}
	s.prod = newProducer(topic)
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
	defaultPassOnly(t)
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
	s.awaitFlowing(v.deadline) // tasks handed back at the rejoin write before the stall (see TestKillWorker)
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
// runs with -chaos.long only: in the default suite, TestExactlyOnceBrokerRestartAndMoveWithAbortedSource
// moves tasks with one SIGTERM and one join.
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
// which re-sends. It runs with -chaos.long only: the default suite restarts B under exactly-once in
// TestExactlyOnceBrokerRestartAndMoveWithAbortedSource, whose source topic is written in transactions; this
// case keeps the plain idempotent source of TestTargetBrokerRestart.
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

// sourceAbortEvery is how often the transactional source producer of
// TestExactlyOnceBrokerRestartAndMoveWithAbortedSource aborts: every third transaction.
const sourceAbortEvery = 3

// TestExactlyOnceBrokerRestartAndMoveWithAbortedSource replicates with exactly-once support a source topic
// that is itself written in transactions, one in three of them aborted after A has written its records (so
// that every partition's log on A interleaves committed records, aborted ones and markers), and injects into
// one cluster, while records flow: kill -9 of broker B and its restart on its data, then a planned move of
// tasks between workers: a worker leaves with SIGTERM (its tasks commit their open transaction and move to
// the two others), then joins again and tasks are rebalanced onto it. Every task that restarts resumes from
// the offsets topic at a position that may fall inside an aborted range or on a marker. B, read with
// read_committed, is audited after each fault.
// Expected: B holds exactly the committed source records: nothing missing, nothing duplicated, nothing
// reordered, no stale write, and not one record of an aborted source transaction (the audit counts those
// records apart, and the case checks that A does hold them, read_uncommitted); and the offsets topic holds
// each partition's last committed source record. The at-least-once counterpart of such faults, which does
// duplicate, is TestKillWorker.
func TestExactlyOnceBrokerRestartAndMoveWithAbortedSource(t *testing.T) {
	defaultPassOnly(t)
	v := vol()
	s := newExactlyOnceScenarioWith(t, "eosmove", nil, func(topic string) *seqProducer {
		return newTxnSeqProducer(t, topic, sourcePartitions, 1, valueSize, sourceAbortEvery)
	})
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	var last auditResult // the totals of the previous audit: each fault's figures are the difference
	faultFigures := func(res *auditResult) (missing, dups, aborted int) {
		missing, dups, aborted = res.Missing-last.Missing, res.Duplicated-last.Duplicated, res.AbortedOnB-last.AbortedOnB
		last = *res
		return missing, dups, aborted
	}

	// Fault 1: kill -9 of broker B, restarted on its data after the outage.
	killedAt := time.Now()
	suite.harness.killKafka(t, "B")
	waitFor(t.Context(), v.outage)
	suite.harness.startKafka(t, "B")
	back := time.Now()
	mark := s.prod.Mark()
	t.Logf("broker B down for %.1f s (until it answered again)", back.Sub(killedAt).Seconds())
	brokerRecovery := s.awaitRecovery("replication after the restart of B", back, s.prod.gen, mark, v.deadline)
	res := s.auditNow(v.deadline, s.prod.expected())
	brokerMissing, brokerDups, brokerAborted := faultFigures(res)
	t.Logf("after the restart of B: missing %d, duplicated %d, of aborted source transactions %d", brokerMissing, brokerDups, brokerAborted)

	// Fault 2: a worker (not the leader) leaves with SIGTERM; its tasks move to the two others.
	st := s.c.awaitSpread(s.name, taskCount, v.deadline)
	leader := s.c.awaitLeader(30 * time.Second)
	mover := s.otherThan(leader.id)
	moved := st.tasksOf(mover.id)
	t.Logf("SIGTERM %s, which runs tasks %v (%s)", mover.id, moved, st.states())
	leftAt := time.Now()
	took := mover.Term(stopTimeout + 15*time.Second)
	st = s.c.awaitSpread(s.name, taskCount, v.deadline)
	t.Logf("%s stopped in %.1f s; its tasks run elsewhere %.1f s after the SIGTERM: %s", mover.id, took.Seconds(), time.Since(leftAt).Seconds(), st.states())
	mark = s.prod.Mark()
	s.awaitRecovery("replication after the leave", leftAt, s.prod.gen, mark, v.deadline)
	res = s.auditNow(v.deadline, s.prod.expected())
	leaveMissing, leaveDups, leaveAborted := faultFigures(res)
	t.Logf("after the leave: missing %d, duplicated %d, of aborted source transactions %d", leaveMissing, leaveDups, leaveAborted)

	// Fault 3: the worker joins again, and tasks are rebalanced onto it (each one handed over by its owner).
	joinedAt := time.Now()
	mover.Restart()
	st = s.c.awaitSpread(s.name, taskCount, v.deadline)
	t.Logf("%s joined; tasks spread over every worker again %.1f s later: %s (it runs %v)", mover.id, time.Since(joinedAt).Seconds(), st.states(), st.tasksOf(mover.id))
	mark = s.prod.Mark()
	s.awaitRecovery("replication after the join", joinedAt, s.prod.gen, mark, v.deadline)
	waitFor(t.Context(), v.settle)

	res = s.finish(v.deadline)
	joinMissing, joinDups, joinAborted := faultFigures(res)
	commits, aborts := s.prod.transactions()
	onA := s.requireAbortedOnA()
	t.Logf("SUMMARY %s: source transactions %d committed, %d aborted (%d aborted records on A, aborted ranges per partition %s); broker B down %.1f s, new records on every partition %.1f s after it was back: missing %d, duplicated %d, aborted on B %d; leave (SIGTERM %s, %.1f s): missing %d, duplicated %d, aborted on B %d; join: missing %d, duplicated %d, aborted on B %d (totals: missing %d, duplicated %d, reordered %d, stale %d, aborted on B %d)",
		t.Name(), commits, aborts, res.AbortedOnA, onA, back.Sub(killedAt).Seconds(), brokerRecovery.Seconds(), brokerMissing, brokerDups, brokerAborted,
		mover.id, took.Seconds(), leaveMissing, leaveDups, leaveAborted, joinMissing, joinDups, joinAborted,
		res.Missing, res.Duplicated, res.Reordered, res.Stale, res.AbortedOnB)
	expectClean(t, res, "missing", "duplicated", "reordered", "stale", "aborted")
	if aborts == 0 || res.AbortedOnA == 0 {
		t.Errorf("the source producer aborted %d transactions (%d records on A): the case tested no aborted source record", aborts, res.AbortedOnA)
	}
	s.requireCommittedOffsets(v.deadline)
}

// requireAbortedOnA reads the source topic on A in full with read_uncommitted and checks that it holds every
// record the transactional producer wrote in the transactions it aborted: the premise of the case, that the
// mirror had aborted records to skip, not records purged before they were sent. It returns, as "median M,
// max N", how many separate aborted ranges (between committed records) each partition's log holds.
func (s *scenario) requireAbortedOnA() string {
	s.t.Helper()
	recs, err := tailTopic(s.t, "A", s.topic, sourcePartitions).snapshot(2 * time.Minute)
	if err != nil {
		s.t.Fatalf("read %s on A: %v", s.topic, err)
	}
	exp := s.prod.expected()
	runs := make([]int, sourcePartitions)
	for p, rs := range recs {
		n, inAborted := 0, false
		for _, r := range rs {
			aborted := r.parsed && r.gen == exp.abortedGen
			if aborted {
				n++
				if !inAborted {
					runs[p]++
				}
			}
			inAborted = aborted
		}
		if n != exp.abortedOnA[p] {
			s.t.Errorf("partition %d of %s on A holds %d records of aborted transactions, the producer wrote %d", p, s.topic, n, exp.abortedOnA[p])
		}
	}
	s.t.Logf("A holds the records of the aborted transactions (read_uncommitted); aborted ranges per partition: %v", runs)
	sorted := slices.Clone(runs)
	slices.Sort(sorted)
	return fmt.Sprintf("median %d, max %d", sorted[len(sorted)/2], sorted[len(sorted)-1])
}
