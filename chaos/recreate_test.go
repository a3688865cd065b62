package chaos

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// recreatedMention is what a task's trace says when a source topic's offsets went backwards (see
// connectors/source/task.go): the topic was re-created or truncated.
const recreatedMention = "re-created"

// TestSourceTopicRecreatedWhilePaused replicates a topic, pauses the connector, deletes the source topic and
// creates it again with the same partitions, writes a new generation of records (sequences from 0 again), and
// resumes. The new generation has twice as many records as the old one, so that the new topic's offsets
// reach past the offsets committed for the old topic: a task that takes them for its own position skips
// the new topic's first records without noticing.
// Expected: both generations complete on B; no trace reports records as lost (one may say the topic was
// re-created while the task was not running, and that what it held past the committed offset cannot be
// known).
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
	checkRecreationReport(t, res, traces, false)
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
	checkRecreationReport(t, res, traces, true)
}

// TestSourceTopicRecreatedWhileTargetFrozen deletes and re-creates the source topic while broker B is frozen
// (SIGSTOP) for longer than the pipelines' delivery allowance: they end with records read and unconfirmed, and
// the topic, deleted before B answers again, takes those records with it. Nothing can replicate them now;
// what matters is that the status says which. The records written to the topic after the pipelines ended
// were never read: the status can only say from which offset on they would have been.
// Expected: the new topic complete on B; every record of the deleted topic missing on B named by a trace
// (partition and offsets, or the offset from which on nothing was read), and nothing reordered.
func TestSourceTopicRecreatedWhileTargetFrozen(t *testing.T) {
	v := vol()
	s := newScenario(t, "recf")
	s.startConnector()
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	traces := s.watchTraces()

	thaw := suite.harness.freezeKafka(t, "B")
	frozenAt := time.Now()
	waitFor(t.Context(), 2300*time.Millisecond) // past the delivery allowance (1.75 s under this suite's TTL)
	t.Logf("generation 1 stopped: acknowledged per partition %v", s.prod.Stop())
	s.recreateTopic()
	thaw()
	t.Logf("B frozen for %.1f s; the source topic was re-created meanwhile", time.Since(frozenAt).Seconds())
	recreatedAt := time.Now()
	s.nextGeneration()
	s.prod.Run(v.rate)
	s.awaitRecovery("generation 2 replicated", recreatedAt, 2, make([]int, sourcePartitions), v.deadline)
	waitFor(t.Context(), v.settle)

	res := s.finishAfterLostGenerations(v.deadline)
	if ranges := checkRecreationReport(t, res, traces, true); ranges == 0 {
		t.Errorf("no trace named records read and unconfirmed when the topic was deleted: the freeze did not end a pipeline with records in flight, so this case was not exercised")
	}
}

// checkRecreationReport compares what was lost with what the traces said about it. The new topic's records
// are never lost. The deleted topic's may be only where the test deleted it with records unreplicated
// (mayLose: a pipeline restarting at that moment, a slow target), and then only if a trace names every lost
// record's partition and offset, exactly or as part of the tail no pipeline read (from an offset on): the
// deletion took them, and the status must say so. It returns how many traces named a range of records read
// and unconfirmed when the topic was deleted (the target may have written some or all of them all the same:
// on the C data path the one record in flight at the freeze was often on B).
func checkRecreationReport(t *testing.T, res *auditResult, traces *traceWatcher, mayLose bool) (ranges int) {
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
	expectClean(t, res, "reordered")
	reports := lossReports(mentions)
	var named, silent, unread, oldLost int
	for _, r := range res.Rows {
		if r.Gen != 1 {
			if r.Missing > 0 {
				t.Errorf("partition %d: %d records of the new topic missing on B", r.Partition, r.Missing)
			}
			continue
		}
		oldLost += r.Missing
		for _, off := range r.missingAt {
			switch {
			case slices.ContainsFunc(reports, func(l lossReport) bool { return l.names(r.Partition, off) }):
				named++
			case slices.ContainsFunc(reports, func(l lossReport) bool { return l.unread(r.Partition, off) }):
				unread++
			default:
				silent++
			}
		}
		for _, l := range reports {
			if l.partition == r.Partition && r.Missing == 0 && l.from >= 0 && !l.inFlight {
				t.Errorf("partition %d: nothing of the deleted topic was lost, yet a trace reports records %d to %d lost", r.Partition, l.from, l.to)
			}
		}
	}
	t.Logf("records of the deleted topic lost: %d; named by a trace: %d; in the never-read tail a trace reports: %d", oldLost, named, unread)
	switch {
	case silent > 0:
		t.Errorf("%d records of the deleted topic were lost and no task trace names them (silent loss)", silent)
	case oldLost > 0 && !mayLose:
		t.Errorf("%d records of the deleted topic were lost although everything was replicated before it was deleted", oldLost)
	}
	for _, l := range reports {
		if l.from >= 0 {
			ranges++
		}
	}
	return ranges
}

// lossReport is a trace's account of records a deleted source topic took with it: a range it names (from,
// to; -1 none), and the offset from which on any record was never read (unreadAt; -1 none): what the topic
// held past it cannot be known.
type lossReport struct {
	partition int
	from, to  int64
	unreadAt  int64
	inFlight  bool // some were in flight: the target may have written them all the same
}

func (l lossReport) names(partition int, offset int64) bool {
	return l.partition == partition && l.from >= 0 && l.from <= offset && offset <= l.to
}

func (l lossReport) unread(partition int, offset int64) bool {
	return l.partition == partition && l.unreadAt >= 0 && offset >= l.unreadAt
}

// The patterns match connectors/source/identity.go's notices for a re-created source topic: DATA NOT
// REPLICATED with a range and the never-read tail, or a re-creation found at start with only the tail.
var (
	recreatedPattern = regexp.MustCompile(`partition (\d+) was deleted and re-created`)
	rangePattern     = regexp.MustCompile(`; records (\d+) to (\d+) of the deleted topic`)
	unreadPattern    = regexp.MustCompile(`held from offset (\d+) on`)
)

func lossReports(lines []string) []lossReport {
	var out []lossReport
	for _, line := range lines {
		m := recreatedPattern.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		l := lossReport{from: -1, to: -1, unreadAt: -1, inFlight: strings.Contains(line, "in flight")}
		l.partition, _ = strconv.Atoi(m[1])
		if r := rangePattern.FindStringSubmatch(line); r != nil {
			l.from, _ = strconv.ParseInt(r[1], 10, 64)
			l.to, _ = strconv.ParseInt(r[2], 10, 64)
		}
		if u := unreadPattern.FindStringSubmatch(line); u != nil {
			l.unreadAt, _ = strconv.ParseInt(u[1], 10, 64)
		}
		out = append(out, l)
	}
	return out
}
