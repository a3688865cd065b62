package source

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestPipelineClockSplitsTheLoopsTime(t *testing.T) {
	t.Parallel()
	var c pipelineClock
	// poll accounts one poll that returned a record (got) or nothing after waiting for waited, as if it had.
	poll := func(got bool, waited time.Duration) (timed bool) {
		start, timed := c.pollStart()
		c.pollEnd(start.Add(-waited), timed, got, 100*time.Millisecond)
		return timed
	}
	t0 := time.Now()
	_, _, _, ok := c.fractions(t0)
	require.False(t, ok, "the first reading only starts the interval")

	// Ten empty polls of 100 ms: a second waiting for the source. The first is not timed and counts its
	// timeout; the ones after it are timed.
	for range 10 {
		poll(false, 100*time.Millisecond)
	}
	// The poll that ends an idle stretch is timed: it waited 30 ms for its record.
	require.True(t, poll(true, 30*time.Millisecond), "the poll after an empty one is timed")
	// A busy stretch: polls that return at once are sampled and count for nothing below the floor.
	for range 1000 {
		poll(true, 0)
	}
	c.targetWait(500 * time.Millisecond)

	source, target, interval, ok := c.fractions(t0.Add(2 * time.Second))
	require.True(t, ok)
	require.Equal(t, 2*time.Second, interval)
	require.InDelta(t, 0.515, source, 0.001, "1.03 s of the 2 waited for the source")
	require.InDelta(t, 0.25, target, 1e-9, "0.5 s of the 2 waited for the target")

	// The next interval starts where this one ended.
	source, target, _, ok = c.fractions(t0.Add(4 * time.Second))
	require.True(t, ok)
	require.Zero(t, source)
	require.Zero(t, target)
}

func TestPipelineClockSamplesSlowBusyPolls(t *testing.T) {
	t.Parallel()
	var c pipelineClock
	c.prevEmpty = false
	timedPolls := 0
	var waited time.Duration
	for range 64 {
		start, timed := c.pollStart()
		if timed {
			timedPolls++
			start = start.Add(-2 * time.Millisecond) // as if the poll had waited 2 ms for a fetch
			waited += 2 * time.Millisecond * pollSampleEvery
		}
		c.pollEnd(start, timed, true, 100*time.Millisecond)
	}
	require.Equal(t, 64/pollSampleEvery, timedPolls)
	require.InDelta(t, float64(waited), float64(c.waitSource.Load()), float64(time.Millisecond),
		"each sampled poll stands for pollSampleEvery polls")
}
