package kafka

import (
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestStatsMailboxKeepsNewest: while the handler is busy, newer documents replace the waiting one instead of
// queueing up; the newest is always handled; after close the handler is not called again.
func TestStatsMailboxKeepsNewest(t *testing.T) {
	release := make(chan struct{})
	var got []string
	var calls atomic.Int32
	m := newStatsMailbox(func(doc string) {
		if calls.Add(1) == 1 {
			<-release // the first document blocks the handler while more arrive
		}
		got = append(got, doc)
	})
	m.put("0")
	require.Eventually(t, func() bool { return calls.Load() == 1 }, 5*time.Second, time.Millisecond)
	for i := 1; i <= 100; i++ {
		m.put(strconv.Itoa(i))
	}
	close(release)
	require.Eventually(t, func() bool { return calls.Load() == 2 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	m.close()
	require.Equal(t, []string{"0", "100"}, got)
	m.put("late") // after close: dropped, never handled
	time.Sleep(10 * time.Millisecond)
	require.Equal(t, int32(2), calls.Load())

	var none *statsMailbox // WithStats not given
	none.put("x")
	none.close()
	require.Nil(t, newStatsMailbox(nil))
}
