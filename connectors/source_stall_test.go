package connectors

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/tasks"
)

// TestStallIsTheTargetAcknowledgingNothing: forwarding pauses, with the target_unreachable notice, only once
// records have waited stallAfter with no acknowledgement of any partition. A partition waiting that long while
// another is acknowledged is not a stall (the scale scenario's target answers one partition per request), an
// idle task never stalls, and one acknowledgement resumes forwarding and clears the notice.
func TestStallIsTheTargetAcknowledgingNothing(t *testing.T) {
	const after = 2 * time.Second
	t0 := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	slow := newSourcePartition(testTP, "A.orders", 9, "")
	slow.reset()
	busy := newSourcePartition(mirror.TopicPartition{Topic: "orders", Partition: 1}, "A.orders", 9, "")
	busy.reset()
	r := &sourceRun{log: slog.New(slog.NewTextHandler(io.Discard, nil)), sourceAlias: "A", targetAlias: "B",
		parts: []*sourcePartition{slow, busy}, stallAfter: after, notices: map[string]tasks.Notice{}}
	check := func(d time.Duration, want bool, why string) {
		t.Helper()
		r.checkStall(at(d))
		if got := r.stalled.Load(); got != want {
			t.Fatalf("at +%s: stalled = %v, want %v: %s", d, got, want, why)
		}
		_, noticed := r.notices["target"]
		if noticed != want {
			t.Fatalf("at +%s: target notice shown = %v, want %v: %s", d, noticed, want, why)
		}
	}

	check(0, false, "nothing forwarded")
	check(10*time.Second, false, "an idle task")

	slow.forwarded(10, tsOf(10), 1, 1)
	busy.forwarded(20, tsOf(20), 1, 1)
	check(10*time.Second, false, "records just forwarded")
	for i := int64(1); i <= 4; i++ { // the busy partition is acknowledged every second, the slow one never
		busy.ack(100 + i - 1)
		busy.forwarded(20+i, tsOf(20+i), 1, 1)
		check(10*time.Second+time.Duration(i)*time.Second, false, "one partition waits while another is acknowledged")
	}

	// Now the target answers nothing: the wait counts from the last check that saw an acknowledgement.
	check(15*time.Second, false, "1 s without acknowledgements")
	check(16*time.Second, false, "exactly stallAfter is not past it")
	check(16*time.Second+time.Millisecond, true, "past stallAfter with nothing acknowledged")
	if n := r.notices["target"]; n.Kind != NoticeTargetUnreachable {
		t.Fatalf("notice kind %q, want %q", n.Kind, NoticeTargetUnreachable)
	}
	check(20*time.Second, true, "still nothing acknowledged")

	slow.ack(200)
	check(20*time.Second+500*time.Millisecond, false, "an acknowledgement resumes forwarding")
}
