package source

import (
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeClockGate is a gate with linger.ms 50 (a 40 ms window), 10 syncs or 1,000 estimated bytes per batch, on a
// clock the test moves.
func fakeClockGate(t *testing.T, props map[string]string) (*syncGate, *time.Time) {
	t.Helper()
	g := newSyncGate(props)
	now := time.Unix(1000, 0)
	g.now = func() time.Time { return now }
	return g, &now
}

// TestSyncGateHoldsSyncsBehindABatchInFlight: syncs join a batch while librdkafka still lingers on it; past 4/5
// of linger.ms they wait, and the last report of the batch wakes every syncer that waited, once.
func TestSyncGateHoldsSyncsBehindABatchInFlight(t *testing.T) {
	g, now := fakeClockGate(t, map[string]string{"linger.ms": "50"})
	woken := map[string]int{}
	wake := func(who string) func() { return func() { woken[who]++ } }

	require.Equal(t, 3, g.admit("a", 3, 100, wake("a")), "nothing in flight: a batch begins")
	*now = now.Add(39 * time.Millisecond)
	require.Equal(t, 2, g.admit("b", 2, 100, wake("b")), "within the window: joins the lingering batch")
	*now = now.Add(time.Millisecond)
	require.Equal(t, 0, g.admit("a", 4, 100, wake("a")), "past the window: the batch may be on its way")
	require.Equal(t, 0, g.admit("b", 1, 100, wake("b")))

	for range 4 {
		g.done()
	}
	require.Empty(t, woken, "one sync of the batch is still in flight")
	g.done()
	require.Equal(t, map[string]int{"a": 1, "b": 1}, woken, "the batch's last report wakes each waiter once")

	*now = now.Add(time.Second)
	require.Equal(t, 4, g.admit("a", 4, 100, wake("a")), "the next batch begins whenever it comes")
}

// TestSyncGateKeepsABatchWithinOneRequest: a batch stops at batch.num.messages and at batch.size less the
// request's overheads, so that nothing is left queued behind its request; whoever got fewer than asked is woken.
func TestSyncGateKeepsABatchWithinOneRequest(t *testing.T) {
	g, _ := fakeClockGate(t, map[string]string{"linger.ms": "50", "batch.num.messages": "10", "batch.size": "100000"})
	woken := 0
	require.Equal(t, 10, g.admit("a", 25, 100, func() { woken++ }), "batch.num.messages")
	for range 10 {
		g.done()
	}
	require.Equal(t, 1, woken)

	g, _ = fakeClockGate(t, map[string]string{"linger.ms": "50", "batch.size": "2000", "message.max.bytes": "100000"})
	require.Equal(t, 14, g.admit("a", 25, 100, func() {}), "(2000-512)/100 syncs fit batch.size")

	g, _ = fakeClockGate(t, map[string]string{"batch.size": "100000", "message.max.bytes": "1512"})
	require.Equal(t, 10, g.admit("a", 25, 100, func() {}), "message.max.bytes bounds a batch too")

	g, _ = fakeClockGate(t, map[string]string{"batch.size": "600"})
	require.Equal(t, 1, g.admit("a", 3, 700, func() {}), "a sync larger than a batch still goes, alone")
}

// TestSyncGateWithoutLinger: with linger.ms 0 librdkafka sends at once, so a batch is what one admit takes,
// and a second caller waits for it.
func TestSyncGateWithoutLinger(t *testing.T) {
	g, _ := fakeClockGate(t, map[string]string{"linger.ms": "0"})
	woken := false
	require.Equal(t, 5, g.admit("a", 5, 100, func() {}))
	require.Equal(t, 0, g.admit("b", 5, 100, func() { woken = true }))
	for range 5 {
		g.done()
	}
	require.True(t, woken)
}

// TestSyncersOfOnePoolShareAGate: the worker's tasks of a connector share the offset-sync producer, whose
// partition 0 of the offset-syncs topic they all write, so they must share its gate.
func TestSyncersOfOnePoolShareAGate(t *testing.T) {
	pool := newProducerPool(slog.New(slog.DiscardHandler))
	props := map[string]string{"bootstrap.servers": "127.0.0.1:1"}
	p1, release1, err := pool.acquire(props)
	require.NoError(t, err)
	defer release1()
	p2, release2, err := pool.acquire(props)
	require.NoError(t, err)
	defer release2()
	require.Same(t, p1.producer, p2.producer)
	require.Same(t, p1.gate, p2.gate)
}
