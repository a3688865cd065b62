package source

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

// TestOverdueCountsFromTheCheckThatFirstSawTheRecord: the oldest unacknowledged record is overdue once the
// earliest check that counted it as forwarded lies `after` back, never before; acknowledgements move the
// reference to the next such check, and an idle partition is never overdue.
func TestOverdueCountsFromTheCheckThatFirstSawTheRecord(t *testing.T) {
	const after = time.Second
	t0 := time.Unix(1_700_000_000, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }
	p := newSourcePartition(testTP, "A.orders", 9, "")
	p.reset()
	if _, late := p.overdue(at(0), after); late {
		t.Fatal("an idle partition is overdue")
	}
	p.forwarded(10, tsOf(10), 1, 1)
	p.forwarded(11, tsOf(11), 1, 1)
	if _, late := p.overdue(at(0), after); late { // first check to see 10 and 11
		t.Fatal("overdue at the first check that saw the records")
	}
	p.forwarded(12, tsOf(12), 1, 1)
	if _, late := p.overdue(at(500*time.Millisecond), after); late {
		t.Fatal("overdue after half the allowance")
	}
	if off, late := p.overdue(at(after), after); !late || off != 10 {
		t.Fatalf("overdue(t0+1s) = %d, %v; want 10, true", off, late)
	}
	p.ack(100) // 10 acknowledged; 11 was counted by the check at t0 too
	if off, late := p.overdue(at(after), after); !late || off != 11 {
		t.Fatalf("after 10's ack: overdue = %d, %v; want 11, true", off, late)
	}
	p.ack(101) // 11 too; 12 was first counted at t0+500ms
	if _, late := p.overdue(at(1400*time.Millisecond), after); late {
		t.Fatal("12 overdue before an allowance passed since the check that first counted it")
	}
	if off, late := p.overdue(at(1500*time.Millisecond), after); !late || off != 12 {
		t.Fatalf("overdue(t0+1.5s) = %d, %v; want 12, true", off, late)
	}
	p.ack(102)
	if _, late := p.overdue(at(10*time.Second), after); late {
		t.Fatal("overdue with nothing in flight")
	}
	p.forwarded(13, tsOf(13), 1, 1)
	p.unforward() // refused by the producer: not in flight
	if _, late := p.overdue(at(20*time.Second), after); late {
		t.Fatal("a record the producer refused counts as in flight")
	}
	if len(p.marks) != 0 {
		t.Fatalf("%d marks kept for an idle partition", len(p.marks))
	}
}

// TestOverdueOnTheCPath: the C path's batches count the same way, from their first record's offset.
func TestOverdueOnTheCPath(t *testing.T) {
	const after = time.Second
	t0 := time.Unix(1_700_000_000, 0)
	p := newSourcePartition(testTP, "A.orders", 9, "")
	p.reset()
	p.forwardedBatch(10, 19, 0, 10, 10)
	p.overdue(t0, after)
	p.forwardedBatch(20, 29, 0, 10, 10)
	p.overdue(t0.Add(300*time.Millisecond), after)
	p.ackedRun(10, 100, 10, 0, nil)
	if _, late := p.overdue(t0.Add(after), after); late {
		t.Fatal("the second batch, first counted at t0+300ms, overdue at t0+1s")
	}
	if off, late := p.overdue(t0.Add(1300*time.Millisecond), after); !late || off != 20 {
		t.Fatalf("overdue(t0+1.3s) = %d, %v; want 20, true", off, late)
	}
}

// purgeRecorder records Purge calls.
type purgeRecorder struct{ calls chan bool }

func (p *purgeRecorder) Purge(inFlight bool) error {
	p.calls <- inFlight
	return nil
}

// TestWatchOverdueEndsThePipeline: the watch sets the run's failure, a pipeline restart naming the partition
// and offset, and purges the producer, in flight included.
func TestWatchOverdueEndsThePipeline(t *testing.T) {
	p := newSourcePartition(testTP, "A.orders", 9, "")
	p.reset()
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	r := &sourceRun{log: log, stalls: &stallWatch{log: log, sourceAlias: "A", targetAlias: "B",
		parts: []*sourcePartition{p}, overdueAfter: 50 * time.Millisecond}}
	p.forwarded(10, tsOf(10), 1, 1)
	purges := &purgeRecorder{calls: make(chan bool, 1)}
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.watchOverdue(t.Context(), purges)
	}()
	select {
	case inFlight := <-purges.calls:
		if !inFlight {
			t.Error("purged without the records in flight")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no purge for a record unacknowledged for 10 s")
	}
	<-done
	f := r.failure.Load()
	if f == nil {
		t.Fatal("no failure set")
	}
	var pe *pipelineError
	if !errors.As(*f, &pe) || !errors.Is(*f, errDeliveryOverdue) {
		t.Fatalf("failure %v: want a pipeline restart for errDeliveryOverdue", *f)
	}
	t.Logf("failure: %v", *f)

	// Acknowledged in time: no failure.
	q := newSourcePartition(testTP, "A.orders", 9, "")
	q.reset()
	r2 := &sourceRun{log: r.log, stalls: &stallWatch{log: r.log, parts: []*sourcePartition{q}, overdueAfter: time.Hour}}
	q.forwarded(10, tsOf(10), 1, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	r2.watchOverdue(ctx, purges)
	if r2.failure.Load() != nil {
		t.Fatalf("failure %v within the allowance", *r2.failure.Load())
	}
}

// TestOverdueAllowanceLeavesLibrdkafkaItsTimeout: the allowance always ends before the delivery timeout, by an
// eighth of it and at least 250 ms, and is never under half of it.
func TestOverdueAllowanceLeavesLibrdkafkaItsTimeout(t *testing.T) {
	for _, c := range []struct{ timeout, want time.Duration }{
		{2 * time.Second, 1750 * time.Millisecond},
		{9 * time.Second, 7875 * time.Millisecond},
		{400 * time.Millisecond, 200 * time.Millisecond},
		{100 * time.Millisecond, 50 * time.Millisecond},
	} {
		if got := overdueAllowance(c.timeout); got != c.want {
			t.Errorf("overdueAllowance(%s) = %s, want %s", c.timeout, got, c.want)
		}
	}
}

// TestRequireGaplessOnIdempotentProducersOnly: an idempotent replication producer runs gap-less, even when the
// user turned it off; a producer without idempotence (which gap-less requires) is left alone.
func TestRequireGaplessOnIdempotentProducersOnly(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, c := range []struct {
		props map[string]string
		want  string
	}{
		{map[string]string{"enable.idempotence": "true"}, "true"},
		{map[string]string{"enable.idempotence": "true", "enable.gapless.guarantee": "false"}, "true"},
		{map[string]string{"enable.idempotence": "false"}, ""},
	} {
		requireGapless(c.props, log)
		if got := c.props["enable.gapless.guarantee"]; got != c.want {
			t.Errorf("requireGapless: enable.gapless.guarantee = %q, want %q (%v)", got, c.want, c.props)
		}
	}
}
