package chaos

import (
	"slices"
	"testing"
	"time"
)

// TestSourceTopicDeletedWhileStopped stops the connector while it is far behind, writes more records while it
// is stopped, deletes the source topic and resumes the connector.
// Expected: the records missing on B are exactly those the notices name: the stopped connector kept watching
// the topic's end offsets, so the records written while it was stopped are named too. Named records on B are
// accepted only where a pipeline wrote them without its commit (see checkDeletionReport).
func TestSourceTopicDeletedWhileStopped(t *testing.T) {
	s := stopBehind(t, "dels")
	deletedAt, notices := s.deleteAndResume()
	res := s.auditGone(10 * time.Second)
	seen := notices.close()
	checkDeletionReport(t, res, seen, deletedAt, sourcePartitions, true)
	checkLossesOutliveTheRun(t, s, seen)
}

// stopBehind is startBehind, then the connector stopped and half as many records again written while it is
// stopped (never seen by a task: only the stopped connector's watch sees them), and the watch given time to.
func stopBehind(t *testing.T, prefix string) *scenario {
	s := startBehind(t, prefix)
	s.c.stop(s.name)
	s.c.awaitStatus(s.name, "STOPPED", time.Minute, func(st connectorStatus) bool {
		return st.Connector.State == "STOPPED" && len(st.Tasks) == 0
	})
	perPartition, _ := deletedVolume()
	s.prod.Burst(perPartition / 2 * sourcePartitions)
	s.awaitEndsSeen(time.Minute)
	return s
}

// awaitEndsSeen waits until GET /connectors/{c}/partitions of the stopped connector shows every partition's
// end offset where the producer left it (Burst waited for every acknowledgement): a deletion from then on is
// judged on what the connector saw, which is the case under test.
func (s *scenario) awaitEndsSeen(within time.Duration) {
	s.t.Helper()
	s.prod.mu.Lock()
	want := make([]int64, len(s.prod.offsets))
	for p := range s.prod.offsets {
		want[p] = int64(len(s.prod.offsets[p]))
	}
	s.prod.mu.Unlock()
	s.awaitPartitions("seen at its end by the stopped connector", within, func(p partitionReport) bool {
		return p.Partition < len(want) && p.EndOffset != nil && *p.EndOffset >= want[p.Partition]
	})
}

// checkLossesOutliveTheRun checks that the connector's loss notices stay shown while it is paused, and come
// back, unchanged, when it runs again after the worker holding it was stopped (SIGTERM): on another worker.
func checkLossesOutliveTheRun(t *testing.T, s *scenario, seen []seenNotice) {
	t.Helper()
	want := lossMessages(seen)
	s.c.pause(s.name)
	s.c.awaitStatus(s.name, "PAUSED with the loss notices", time.Minute, func(st connectorStatus) bool {
		all, err := s.fetchNotices()
		return err == nil && st.Connector.State == "PAUSED" && slices.Equal(lossMessages(all), want)
	})
	s.c.resume(s.name)
	as, err := s.c.assignments(s.name)
	if err != nil || as[-1].Worker == "" {
		t.Fatalf("who holds %s: %v %v", s.name, as, err)
	}
	holder := s.c.worker(as[-1].Worker)
	movedAt := time.Now()
	holder.Term(time.Minute)
	holder.Restart()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		all, err := s.fetchNotices()
		got := lossMessages(all)
		now, _ := s.c.assignments(s.name)
		st, stErr := s.c.status(s.name)
		// The new run's status names its worker: notices seen with it are the new run's, not the old one's.
		shownByNewRun := stErr == nil && now[-1].Epoch != as[-1].Epoch && st.Connector.WorkerID == now[-1].Worker &&
			st.Connector.State == "RUNNING"
		if err == nil && shownByNewRun && slices.Equal(got, want) {
			t.Logf("SUMMARY %s: %d loss notices shown again %.1f s after the worker holding the connector (%s) was stopped; the connector now runs on %s",
				t.Name(), len(got), time.Since(movedAt).Seconds(), holder.id, now[-1].Worker)
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the loss notices did not outlive the connector's run: want %d, have %d (%v); assignments %s",
				len(want), len(got), err, describeAssignments(now))
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// lossMessages returns the messages of the data_not_replicated notices, sorted.
func lossMessages(notices []seenNotice) []string {
	var out []string
	for _, n := range notices {
		if n.Kind == kindDataNotReplicated {
			out = append(out, n.Message)
		}
	}
	slices.Sort(out)
	return out
}

// TestSourceTopicRecreatedWhileStopped stops the connector while it is far behind, writes more records while it
// is stopped, deletes the source topic, creates it again with the same partitions, writes a new generation into
// it and resumes the connector.
// Expected: the new topic complete on B; the records of the deleted topic missing on B are exactly those the
// task traces name as not replicated (judged on the end the stopped connector saw), none in a tail nobody saw.
func TestSourceTopicRecreatedWhileStopped(t *testing.T) {
	v := vol()
	s := stopBehind(t, "recs")
	s.recreateTopic()
	s.nextGeneration()
	s.prod.Burst(v.burst)
	traces := s.watchTraces()
	s.c.resume(s.name)
	st := s.c.awaitRunning(s.name, taskCount, time.Minute)
	t.Logf("resumed: %s", st.states())

	res := s.finishAfterLostGenerations(2 * v.deadline)
	awaitLossTraces(t, res, traces, time.Minute)
	checkRecreationReport(t, res, traces, true)
	reports := lossReports(traces.mentioning(recreatedMention))
	lost, reported := 0, 0
	for _, r := range res.Rows {
		if r.Gen != 1 {
			continue
		}
		lost += r.Missing
		named := 0
		for _, l := range reports {
			if l.partition == r.Partition && l.from >= 0 {
				named += int(l.to - l.from + 1)
			}
		}
		reported += named
		inRange := 0
		for _, off := range r.missingAt {
			if slices.ContainsFunc(reports, func(l lossReport) bool { return l.names(r.Partition, off) }) {
				inRange++
			}
		}
		t.Logf("partition %d: lost %d, named %d, of them in a named range %d", r.Partition, r.Missing, named, inRange)
		if named != r.Missing || inRange != r.Missing {
			t.Errorf("partition %d: %d records of the deleted topic lost, a trace names %d (%d of the lost ones): the report must be exact",
				r.Partition, r.Missing, named, inRange)
		}
	}
	t.Logf("SUMMARY %s: records of the deleted topic lost %d, named as not replicated %d", t.Name(), lost, reported)
}

// awaitLossTraces waits until a task trace names the re-creation of every partition that lost records of the
// deleted topic: a task judges it when its pipeline starts, which on a loaded machine can be after the new
// topic's records are on B.
func awaitLossTraces(t *testing.T, res *auditResult, traces *traceWatcher, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		reports := lossReports(traces.mentioning(recreatedMention))
		waiting := 0
		for _, r := range res.Rows {
			if r.Gen == 1 && r.Missing > 0 && !slices.ContainsFunc(reports, func(l lossReport) bool { return l.partition == r.Partition }) {
				waiting++
			}
		}
		if waiting == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Logf("%d partitions that lost records have no trace naming the re-creation after %s", waiting, within)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}
