package chaos

import (
	"strings"
	"testing"
	"time"
)

// recreatedMention is what a task's trace says when a source topic's offsets went backwards (see
// connectors/source_task.go): the topic was re-created or truncated.
const recreatedMention = "re-created"

// TestSourceTopicRecreatedWhilePaused replicates a topic, pauses the connector, deletes the source topic and
// creates it again with the same partitions, writes a new generation of records (sequences from 0 again), and
// resumes. The new generation has twice as many records as the old one, so that the new topic's offsets
// reach past the offsets committed for the old topic: a task that takes them for its own position skips
// the new topic's first records without noticing.
// Expected: both generations complete on B; a trace mentions the re-creation only if something was lost,
// and always if something was.
func TestSourceTopicRecreatedWhilePaused(t *testing.T) {
	v := vol()
	s := newScenario(t, "recp")
	s.prod.Burst(v.burst)
	s.startConnector()
	if _, err := s.tail.awaitCaughtUp(v.deadline, s.prod.expected()); err != nil {
		t.Fatalf("generation 1: %v", err)
	}

	s.c.pause(s.name)
	st := s.c.awaitStatus(s.name, "PAUSED", time.Minute, func(st connectorStatus) bool { return st.allIn("PAUSED", taskCount) })
	t.Logf("paused: %s", st.states())
	s.recreateTopic()
	s.nextGeneration()
	s.prod.Burst(2 * v.burst)
	traces := s.watchTraces()
	s.c.resume(s.name)
	st = s.c.awaitRunning(s.name, taskCount, time.Minute)
	t.Logf("resumed: %s", st.states())

	res := s.finish(v.deadline)
	checkRecreationReport(t, res, traces)
}

// TestSourceTopicRecreatedUnderLoad deletes and re-creates the source topic while the connector runs and
// records flow: generation 1 until the deletion, generation 2 into the new topic right after.
// Expected: both generations complete on B; a trace mentions the re-creation only if something was lost.
func TestSourceTopicRecreatedUnderLoad(t *testing.T) {
	v := vol()
	s := newScenario(t, "recl")
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	waitFor(t.Context(), v.settle) // let the old topic's offsets grow past what the new one starts with

	t.Logf("generation 1 stopped: acknowledged per partition %v", s.prod.Stop())
	traces := s.watchTraces()
	recreatedAt := time.Now()
	s.recreateTopic()
	s.nextGeneration()
	s.prod.Run(v.rate)
	s.awaitRecovery("generation 2 replicated", recreatedAt, 2, make([]int, sourcePartitions), v.deadline)
	waitFor(t.Context(), v.settle)

	res := s.finish(v.deadline)
	checkRecreationReport(t, res, traces)
}

// checkRecreationReport compares what was lost with what the traces said about it.
func checkRecreationReport(t *testing.T, res *auditResult, traces *traceWatcher) {
	t.Helper()
	traces.close()
	mentions := traces.mentioning(recreatedMention)
	byGen := map[int]int{}
	for _, r := range res.Rows {
		byGen[r.Gen] += r.Missing
	}
	t.Logf("SUMMARY %s: missing gen 1: %d, gen 2: %d; duplicated %d, reordered %d, stale %d; traces mentioning the re-creation: %d",
		t.Name(), byGen[1], byGen[2], res.Duplicated, res.Reordered, res.Stale, len(mentions))
	if all := traces.lines(); len(all) > 0 {
		t.Logf("task traces seen:\n%s", strings.Join(all, "\n"))
	}
	expectClean(t, res, "missing", "reordered")
	lost := res.Missing > 0
	switch {
	case lost && len(mentions) == 0:
		t.Errorf("%d records were lost and no task trace says so (silent loss)", res.Missing)
	case !lost && len(mentions) > 0:
		t.Errorf("nothing was lost, yet a trace reports the re-creation as a loss: %q", mentions[0])
	}
}
