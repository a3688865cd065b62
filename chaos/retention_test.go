package chaos

import (
	"fmt"
	"testing"
	"time"
)

// TestRetentionDeletesUnread stops the connector, writes records, deletes the older half of them on A
// (DeleteRecords, as retention would) before they were replicated, writes more, and resumes.
// Expected: each partition's task trace names the deleted range with its exact offsets, and every record that
// still exists on A is replicated.
func TestRetentionDeletesUnread(t *testing.T) {
	v := vol()
	s := newScenario(t, "ret")
	s.prod.Burst(v.burst)
	s.startConnector()
	if _, err := s.tail.awaitCaughtUp(v.deadline, s.prod.expected()); err != nil {
		t.Fatalf("before the stop: %v", err)
	}

	s.c.stop(s.name)
	s.c.awaitStatus(s.name, "STOPPED", time.Minute, func(st connectorStatus) bool {
		return st.Connector.State == "STOPPED" && len(st.Tasks) == 0
	})
	committed, err := s.c.offsets(s.name)
	if err != nil {
		t.Fatalf("offsets: %v", err)
	}
	before := s.prod.expected()
	s.prod.Burst(v.burst)
	written := s.prod.expected()

	admin := newAdmin(t, "A")
	var wants []string
	for p := range sourcePartitions {
		next, ok := committed[s.topic][p]
		if !ok {
			t.Fatalf("no committed offset for partition %d: %v", p, committed)
		}
		next++ // the next offset the task will read
		if last := before.lastOffset(p); next != last+1 {
			t.Logf("partition %d: committed offset %d, but %d was replicated before the stop", p, next-1, last)
		}
		hi := written.lastOffset(p)
		cut := next + (hi-next+1)/2
		if err := admin.DeleteRecordsBefore(t.Context(), s.topic, int32(p), cut); err != nil {
			t.Fatalf("delete records of partition %d before %d: %v", p, cut, err)
		}
		s.prod.deletedOnA(p, next, cut)
		wants = append(wants, fmt.Sprintf("records %d to %d of A topic %s partition %d were deleted", next, cut-1, s.topic, p))
		t.Logf("partition %d: deleted offsets %d to %d on A, unread", p, next, cut-1)
	}
	s.prod.Burst(v.burst)

	traces := s.watchTraces()
	s.c.resume(s.name)
	st := s.c.awaitRunning(s.name, taskCount, time.Minute)
	t.Logf("resumed: %s", st.states())
	reported := 0
	for _, want := range wants {
		if traces.awaitMention(want, 30*time.Second) {
			reported++
		} else {
			t.Errorf("no task trace says %q", want)
		}
	}
	res := s.finish(v.deadline)
	traces.close()
	t.Logf("task traces seen:\n%v", traces.lines())
	t.Logf("SUMMARY %s: deleted ranges reported with exact offsets: %d of %d; missing %d, duplicated %d, reordered %d, stale %d",
		t.Name(), reported, len(wants), res.Missing, res.Duplicated, res.Reordered, res.Stale)
	expectClean(t, res, "missing", "reordered")
}
