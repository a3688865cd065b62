package source

import (
	"context"
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// drainEnv is a TaskEnv whose run has a stop context and a lease that may be revoked.
type drainEnv struct {
	tasks.TaskEnv
	stop    context.Context
	revoked chan struct{}
}

func (e drainEnv) StopContext() context.Context { return e.stop }
func (e drainEnv) Lease() tasks.Lease           { return drainLease{revoked: e.revoked} }

type drainLease struct {
	tasks.Lease
	revoked chan struct{}
}

func (l drainLease) Revoked() <-chan struct{} { return l.revoked }

// drainProducer holds records that Flush delivers, unless it is stuck: then only a purge reports them, and
// not even that when the purge is stuck too.
type drainProducer struct {
	held               int
	stuck, purgeStuck  bool
	fatal, auth        error
	flushes, purges    int
	purgedWithInFlight bool
}

func (p *drainProducer) Fatal() error       { return p.fatal }
func (p *drainProducer) AuthFailure() error { return p.auth }
func (p *drainProducer) Outstanding() int   { return p.held }
func (p *drainProducer) Purge(inFlight bool) error {
	p.purges++
	p.purgedWithInFlight = inFlight
	if !p.purgeStuck {
		p.held = 0
	}
	return nil
}

func (p *drainProducer) Flush(ctx context.Context) int {
	p.flushes++
	if p.stuck && p.held > 0 {
		<-ctx.Done()
		return p.held
	}
	p.held = 0
	return 0
}

func drainRun(stop context.Context, revoked chan struct{}) *sourceRun {
	return &sourceRun{env: drainEnv{stop: stop, revoked: revoked}, log: slog.New(slog.DiscardHandler)}
}

// The soft stop lets a healthy producer deliver what it holds; it drops what is left once the stop budget is
// spent or the lease revoked, and at once when nothing more can be delivered (a failed delivery, a fatal
// producer, a failed authentication).
func TestDrainDeliversWithinTheStopBudgetOnly(t *testing.T) {
	reports := 0
	reported := func() { reports++ }
	stopping, stop := context.WithCancel(context.Background())
	stop()

	p := &drainProducer{held: 5}
	require.Zero(t, drainRun(context.Background(), make(chan struct{})).drain(stopping, p, reported))
	require.Equal(t, 0, p.purges, "everything delivered")
	require.Equal(t, 1, reports)

	spent, spend := context.WithCancel(context.Background())
	spend()
	p = &drainProducer{held: 5, stuck: true}
	require.Equal(t, 5, drainRun(spent, make(chan struct{})).drain(stopping, p, reported))
	require.Equal(t, 1, p.purges, "the budget spent: dropped")
	require.True(t, p.purgedWithInFlight)
	require.Equal(t, 3, reports, "reports applied after the flush and after the purge")

	revoked := make(chan struct{})
	close(revoked)
	p = &drainProducer{held: 2, stuck: true}
	require.Equal(t, 2, drainRun(context.Background(), revoked).drain(stopping, p, reported), "a revoked lease drops at once")

	r := drainRun(context.Background(), make(chan struct{}))
	failed := errors.New("delivery failed")
	r.failure.Store(&failed)
	p = &drainProducer{held: 3}
	require.Equal(t, 3, r.drain(stopping, p, reported))
	require.Equal(t, 1, p.purges)
	require.Equal(t, 1, p.flushes, "only the purged records' reports are awaited")

	for _, p := range []*drainProducer{{held: 1, fatal: errors.New("fatal")}, {held: 1, auth: errors.New("authentication failed")}} {
		require.Equal(t, 1, drainRun(context.Background(), make(chan struct{})).drain(stopping, p, reported))
		require.Equal(t, 1, p.purges)
	}
}

// A pipeline that restarts while its run goes on waits for its producer within the settle window, not for as
// long as the run lives: a producer that reports neither its records nor their purge is left after it.
func TestDrainOfARestartEndsWithinTheSettleWindow(t *testing.T) {
	stopBudget, stop := context.WithCancel(context.Background())
	defer stop() // the run goes on: its stop budget never starts
	for _, failed := range []bool{false, true} {
		r := drainRun(stopBudget, make(chan struct{}))
		r.settleWait = 20 * time.Millisecond
		if failed {
			err := errors.New("delivery failed")
			r.failure.Store(&err)
		}
		p := &drainProducer{held: 4, stuck: true, purgeStuck: true}
		done := make(chan int)
		go func() { done <- r.drain(context.Background(), p, func() {}) }()
		select {
		case left := <-done:
			require.Equal(t, 4, left, "failed %v", failed)
			require.Equal(t, 1, p.purges, "failed %v", failed)
		case <-time.After(time.Minute):
			t.Fatalf("drain of a restarting pipeline (failed %v) still waits for a producer that reports nothing", failed)
		}
	}
}

// OppositeRanges: no opposite flow writes into the partitions.
func (e drainEnv) OppositeRanges(context.Context, []kmtype.RangeQuery) ([]kmtype.TargetRange, error) {
	return nil, nil
}
