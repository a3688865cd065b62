package lograte

import (
	"container/list"
	"context"
	"log/slog"
	"runtime"
	"sync"
	"time"
)

// DefaultMaxKeys is how many keys a Limiter remembers unless WithMaxKeys says otherwise. Keys name failures,
// not occurrences, so a process has a few dozen at a time; the cap is there for keys built from error texts.
const DefaultMaxKeys = 1024

// Limiter rate-limits log lines by key. It is safe for concurrent use. The zero Limiter logs every occurrence
// (no interval) and remembers up to DefaultMaxKeys keys.
type Limiter struct {
	interval time.Duration
	maxKeys  int
	now      func() time.Time

	mu    sync.Mutex
	keys  map[string]*list.Element // values are *entry
	order list.List                // most recently seen at the front, so eviction takes the back
}

// entry is what a Limiter knows of one key since its first occurrence (or its last Resolved or Clear).
type entry struct {
	key        string
	firstSeen  time.Time
	lastLogged time.Time
	suppressed int        // occurrences not logged since lastLogged
	total      int        // occurrences since firstSeen
	level      slog.Level // of the latest occurrence, so that Resolved matches it
}

// Option tunes a Limiter.
type Option func(*Limiter)

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option {
	return func(l *Limiter) { l.now = now }
}

// WithMaxKeys caps how many keys the Limiter remembers; n <= 0 means DefaultMaxKeys. When a new key would
// exceed the cap, the least recently seen key is forgotten, suppressed count included: its next occurrence is
// logged at once, as a first one.
func WithMaxKeys(n int) Option {
	return func(l *Limiter) { l.maxKeys = n }
}

// New returns a Limiter that logs each key at most once per interval. An interval <= 0 logs every occurrence
// but still counts them for Resolved.
func New(interval time.Duration, opts ...Option) *Limiter {
	l := &Limiter{interval: interval}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Log logs msg with args at level on logger, unless an occurrence of key was logged less than an interval
// ago, in which case it only counts this one. A line that follows suppressed occurrences carries "repeated"
// with their number. It reports whether it logged. Occurrences at a level the logger does not enable are
// neither logged nor counted.
func (l *Limiter) Log(ctx context.Context, logger *slog.Logger, level slog.Level, key, msg string, args ...any) bool {
	if logger == nil || !logger.Enabled(ctx, level) {
		return false
	}
	now := l.clock()
	l.mu.Lock()
	e := l.touch(key, now)
	e.total++
	e.level = level
	write := e.total == 1 || now.Sub(e.lastLogged) >= l.interval
	repeated := 0
	if write {
		repeated, e.suppressed, e.lastLogged = e.suppressed, 0, now
	} else {
		e.suppressed++
	}
	l.mu.Unlock()

	if !write {
		return false
	}
	if repeated > 0 {
		// Full slice expression: appending must not write into the caller's backing array.
		args = append(args[:len(args):len(args)], "repeated", repeated)
	}
	emit(ctx, logger, level, now, msg, args)
	return true
}

// Resolved reports that the failure logged under key has stopped: it logs msg with args, plus "failures" (how
// many occurrences there were) and "failing_for" (since the first), and forgets key so that a new failure is
// logged at once. The line is at Info, or at the failures' level when that is lower: a recovery from a
// failure only worth a debug line is not worth more. When key has no failure on record, it logs nothing and
// returns false, so callers can call it on every success.
func (l *Limiter) Resolved(ctx context.Context, logger *slog.Logger, key, msg string, args ...any) bool {
	now := l.clock()
	l.mu.Lock()
	el, ok := l.keys[key]
	if !ok {
		l.mu.Unlock()
		return false
	}
	e := l.remove(el)
	l.mu.Unlock()

	level := min(slog.LevelInfo, e.level)
	if logger == nil || !logger.Enabled(ctx, level) {
		return true
	}
	args = append(args[:len(args):len(args)], "failures", e.total, "failing_for", now.Sub(e.firstSeen))
	emit(ctx, logger, level, now, msg, args)
	return true
}

// Clear forgets key without logging: its next occurrence is logged at once. Use it when a failure stops in a
// way not worth a line of its own, such as the unit of work that failed being removed.
func (l *Limiter) Clear(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el, ok := l.keys[key]; ok {
		l.remove(el)
	}
}

func (l *Limiter) clock() time.Time {
	if l.now != nil {
		return l.now()
	}
	return time.Now()
}

// touch returns key's entry, created if need be, and marks it most recently seen. l.mu must be held.
func (l *Limiter) touch(key string, now time.Time) *entry {
	if el, ok := l.keys[key]; ok {
		l.order.MoveToFront(el)
		return el.Value.(*entry)
	}
	if l.keys == nil {
		l.keys = map[string]*list.Element{}
	}
	limit := l.maxKeys
	if limit <= 0 {
		limit = DefaultMaxKeys
	}
	for len(l.keys) >= limit {
		l.remove(l.order.Back())
	}
	e := &entry{key: key, firstSeen: now}
	l.keys[key] = l.order.PushFront(e)
	return e
}

// remove forgets an entry and returns it. l.mu must be held.
func (l *Limiter) remove(el *list.Element) *entry {
	e := l.order.Remove(el).(*entry)
	delete(l.keys, e.key)
	return e
}

// emit writes one record whose source is Log's or Resolved's caller, not this package, so that AddSource
// handlers point at the code that failed.
func emit(ctx context.Context, logger *slog.Logger, level slog.Level, now time.Time, msg string, args []any) {
	var pcs [1]uintptr
	runtime.Callers(3, pcs[:]) // runtime.Callers, emit, Log or Resolved
	r := slog.NewRecord(now, level, msg, pcs[0])
	r.Add(args...)
	_ = logger.Handler().Handle(ctx, r)
}
