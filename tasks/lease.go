package tasks

import (
	"sync"
	"sync/atomic"
	"time"
)

// sessionLease is the write permission of one worker session. It is extended by each heartbeat the database
// confirmed, to the time the heartbeat was sent plus WorkerTTL minus the settle window: the leader declares a
// worker dead only WorkerTTL after its last confirmed heartbeat (by the database's clock, which is later than
// the moment this worker sent it), so the lease always ends at least one settle window before any other worker
// may claim one of its units. Time is measured on the monotonic clock, so wall-clock jumps change nothing.
type sessionLease struct {
	base    time.Time    // monotonic reference
	until   atomic.Int64 // nanoseconds after base when the lease ends
	settle  time.Duration
	revoked chan struct{}
	gone    atomic.Bool // revoked, for the hot path (a channel select costs more than a load)
	once    sync.Once
}

func newSessionLease(settle time.Duration) *sessionLease {
	return &sessionLease{base: time.Now(), settle: settle, revoked: make(chan struct{})}
}

// extend moves the end of the lease to end, if that is later.
func (l *sessionLease) extend(end time.Time) {
	n := int64(end.Sub(l.base))
	for {
		cur := l.until.Load()
		if n <= cur || l.until.CompareAndSwap(cur, n) {
			return
		}
	}
}

// remaining is how long the lease still runs unless extended: zero once it has ended. It is on the replication
// hot path (Valid, before and after every record a task hands over): two atomic loads and a monotonic clock
// read. The clock is read here rather than a flag set by a timer, because after a stall (SIGSTOP) the record
// loop may run before any timer goroutine does.
func (l *sessionLease) remaining() time.Duration {
	if l.gone.Load() {
		return 0
	}
	return max(0, time.Duration(l.until.Load()-int64(time.Since(l.base))))
}

// revoke ends the session's lease for good: the worker was declared dead or is leaving.
func (l *sessionLease) revoke() {
	l.once.Do(func() {
		l.gone.Store(true)
		close(l.revoked)
	})
}

// runLease is the Lease of one run: its session's lease, ended early when the run itself is fenced.
type runLease struct {
	session *sessionLease
	revoked chan struct{}
	gone    atomic.Bool
	once    sync.Once
	stop    chan struct{} // closed to end the watcher once the run is over
}

func newRunLease(s *sessionLease) *runLease {
	l := &runLease{session: s, revoked: make(chan struct{}), stop: make(chan struct{})}
	go func() {
		select {
		case <-s.revoked:
			l.revoke()
		case <-l.stop:
		}
	}()
	return l
}

func (l *runLease) Valid() bool { return l.ValidFor() > 0 }

func (l *runLease) ValidFor() time.Duration {
	if l.gone.Load() {
		return 0
	}
	return l.session.remaining()
}

func (l *runLease) Revoked() <-chan struct{} { return l.revoked }
func (l *runLease) Settle() time.Duration    { return l.session.settle }

func (l *runLease) revoke() {
	l.once.Do(func() {
		l.gone.Store(true)
		close(l.revoked)
	})
}

// done releases the watcher goroutine; the lease stays revoked or valid as it was.
func (l *runLease) done() {
	select {
	case <-l.stop:
	default:
		close(l.stop)
	}
}
