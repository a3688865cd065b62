package chaos

import (
	"slices"
	"strings"
	"sync"
	"time"
)

// traceWatcher collects every distinct task or connector trace the status shows while it runs: a notice may
// be cleared again once the task has moved past what it reports.
type traceWatcher struct {
	stop chan struct{}
	done chan struct{}
	mu   sync.Mutex
	seen []string
}

func (s *scenario) watchTraces() *traceWatcher {
	tw := &traceWatcher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(tw.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if st, err := s.c.status(s.name); err == nil {
				tw.mu.Lock()
				for _, u := range st.Tasks {
					for line := range strings.SplitSeq(u.Trace, "\n") {
						if line = strings.TrimSpace(line); line != "" && !slices.Contains(tw.seen, line) {
							tw.seen = append(tw.seen, line)
						}
					}
				}
				tw.mu.Unlock()
			}
			select {
			case <-tw.stop:
				return
			case <-tick.C:
			}
		}
	}()
	s.t.Cleanup(tw.close)
	return tw
}

func (tw *traceWatcher) close() {
	select {
	case <-tw.stop:
	default:
		close(tw.stop)
	}
	<-tw.done
}

// lines returns the distinct trace lines seen so far.
func (tw *traceWatcher) lines() []string {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return slices.Clone(tw.seen)
}

// mentioning returns the lines seen so far that contain s.
func (tw *traceWatcher) mentioning(s string) []string {
	var out []string
	for _, l := range tw.lines() {
		if strings.Contains(l, s) {
			out = append(out, l)
		}
	}
	return out
}

// awaitMention waits until a trace line containing s has been seen.
func (tw *traceWatcher) awaitMention(s string, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for {
		if len(tw.mentioning(s)) > 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(100 * time.Millisecond)
	}
}
