package source

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
)

// TestStallNoticeOnlyWhenTheTargetAcknowledgesNothing: forwarding pauses once a partition has waited stallAfter
// for an acknowledgement, but the task says the target acknowledges nothing (the target_unreachable notice)
// only once records have waited that long with no acknowledgement of any partition: a partition waiting while
// another is acknowledged is the scale scenario's target answering one partition per request, not an outage.
// An idle task never stalls, and acknowledgements resume forwarding and clear the notice.
func TestStallNoticeOnlyWhenTheTargetAcknowledgesNothing(t *testing.T) {
	const after = 2 * time.Second
	t0 := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	slow := newSourcePartition(testTP, "A.orders", 9, "")
	slow.reset()
	busy := newSourcePartition(mirror.TopicPartition{Topic: "orders", Partition: 1}, "A.orders", 9, "")
	busy.reset()
	w := &stallWatch{log: slog.New(slog.NewTextHandler(io.Discard, nil)), sourceAlias: "A", targetAlias: "B",
		notices: &noticeBoard{}, parts: []*sourcePartition{slow, busy}, stallAfter: after}
	check := func(d time.Duration, paused, noticed bool, why string) {
		t.Helper()
		w.checkStall(at(d))
		if got := w.stalled.Load(); got != paused {
			t.Fatalf("at +%s: forwarding paused = %v, want %v: %s", d, got, paused, why)
		}
		if _, got := w.notices.notices["target"]; got != noticed {
			t.Fatalf("at +%s: target notice shown = %v, want %v: %s", d, got, noticed, why)
		}
	}

	check(0, false, false, "nothing forwarded")
	check(10*time.Second, false, false, "an idle task")

	slow.forwarded(10, tsOf(10), 1, 1)
	busy.forwarded(20, tsOf(20), 1, 1)
	check(10*time.Second, false, false, "records just forwarded")
	busy.ack(100)
	busy.forwarded(21, tsOf(21), 1, 1)
	check(11*time.Second, false, false, "one partition waited 1 s")
	busy.ack(101)
	busy.forwarded(22, tsOf(22), 1, 1)
	check(12*time.Second, false, false, "one partition waited exactly stallAfter")
	for i := int64(3); i <= 4; i++ { // the busy partition is acknowledged every second, the slow one never
		busy.ack(100 + i - 1)
		busy.forwarded(20+i, tsOf(20+i), 1, 1)
		check(10*time.Second+time.Duration(i)*time.Second, true, false, "one partition waits past stallAfter while another is acknowledged")
	}

	// Now the target answers nothing: the wait counts from the last check that saw an acknowledgement (+14 s).
	check(15*time.Second, true, false, "1 s without any acknowledgement")
	check(16*time.Second, true, false, "exactly stallAfter is not past it")
	check(16*time.Second+time.Millisecond, true, true, "past stallAfter with nothing acknowledged")
	if n := w.notices.notices["target"]; n.Kind != NoticeTargetUnreachable {
		t.Fatalf("notice kind %q, want %q", n.Kind, NoticeTargetUnreachable)
	}
	check(20*time.Second, true, true, "still nothing acknowledged")

	slow.ack(200)
	check(20*time.Second+500*time.Millisecond, true, false, "an acknowledgement clears the notice; the busy partition still waits")
	busy.ack(104)
	check(21*time.Second, false, false, "everything acknowledged")
}
