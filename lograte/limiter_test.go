package lograte_test

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/lograte"
)

// clock is a settable time source; nothing in these tests sleeps.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func newClock() *clock { return &clock{now: time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)} }

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// recorder is a slog.Handler that keeps every record.
type recorder struct {
	level slog.Level
	mu    sync.Mutex
	recs  []slog.Record
}

func (h *recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level }
func (h *recorder) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.recs = append(h.recs, r.Clone())
	return nil
}
func (h *recorder) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h *recorder) WithGroup(string) slog.Handler      { return h }

func (h *recorder) records() []slog.Record {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]slog.Record(nil), h.recs...)
}

// attrs returns a record's attributes by key.
func attrs(r slog.Record) map[string]any {
	m := map[string]any{}
	r.Attrs(func(a slog.Attr) bool {
		m[a.Key] = a.Value.Any()
		return true
	})
	return m
}

func setup(opts ...lograte.Option) (*lograte.Limiter, *clock, *recorder, *slog.Logger) {
	c := newClock()
	h := &recorder{level: slog.LevelDebug}
	l := lograte.New(10*time.Second, append([]lograte.Option{lograte.WithClock(c.Now)}, opts...)...)
	return l, c, h, slog.New(h)
}

func TestFirstOccurrenceAtOnceThenOncePerInterval(t *testing.T) {
	t.Parallel()
	l, c, h, log := setup()
	ctx := context.Background()

	require.True(t, l.Log(ctx, log, slog.LevelWarn, "db", "database unreachable", "error", "refused"))
	for range 5 {
		c.Advance(time.Second)
		require.False(t, l.Log(ctx, log, slog.LevelWarn, "db", "database unreachable", "error", "refused"))
	}
	require.Len(t, h.records(), 1)
	require.Equal(t, map[string]any{"error": "refused"}, attrs(h.records()[0]), "the first line has no repeated count")

	c.Advance(5 * time.Second) // 10 s after the first line
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "db", "database unreachable", "error", "reset"))
	recs := h.records()
	require.Len(t, recs, 2)
	require.Equal(t, "database unreachable", recs[1].Message)
	require.Equal(t, slog.LevelWarn, recs[1].Level)
	require.Equal(t, c.Now(), recs[1].Time, "records carry the limiter's clock")
	require.Equal(t, map[string]any{"error": "reset", "repeated": int64(5)}, attrs(recs[1]))

	// The count restarts with each line.
	c.Advance(3 * time.Second)
	require.False(t, l.Log(ctx, log, slog.LevelWarn, "db", "database unreachable"))
	c.Advance(7 * time.Second)
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "db", "database unreachable"))
	require.Equal(t, map[string]any{"repeated": int64(1)}, attrs(h.records()[2]))

	// After a quiet interval with nothing suppressed, the next line has no count.
	c.Advance(time.Minute)
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "db", "database unreachable"))
	require.Empty(t, attrs(h.records()[3]))
}

func TestKeysAreIndependent(t *testing.T) {
	t.Parallel()
	l, c, h, log := setup()
	ctx := context.Background()
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "task-0", "produce failed"))
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "task-1", "produce failed"))
	require.False(t, l.Log(ctx, log, slog.LevelWarn, "task-0", "produce failed"))
	c.Advance(10 * time.Second)
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "task-1", "produce failed"))
	require.Empty(t, attrs(h.records()[2]), "task-0's suppressed occurrence is not task-1's")
}

func TestResolvedReportsTheFailuresAndForgetsTheKey(t *testing.T) {
	t.Parallel()
	l, c, h, log := setup()
	ctx := context.Background()

	require.False(t, l.Resolved(ctx, log, "db", "database reachable again"), "nothing to resolve")
	require.Empty(t, h.records())

	for range 4 {
		l.Log(ctx, log, slog.LevelWarn, "db", "database unreachable")
		c.Advance(5 * time.Second)
	}
	require.True(t, l.Resolved(ctx, log, "db", "database reachable again", "database", "kmirror"))
	recs := h.records()
	require.Len(t, recs, 3) // first, one 10 s later, the recovery
	require.Equal(t, "database reachable again", recs[2].Message)
	require.Equal(t, slog.LevelInfo, recs[2].Level, "a recovery from warnings is news, not a warning")
	require.Equal(t, map[string]any{"database": "kmirror", "failures": int64(4), "failing_for": 20 * time.Second}, attrs(recs[2]))

	require.False(t, l.Resolved(ctx, log, "db", "database reachable again"), "resolved once")
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "db", "database unreachable"), "a new failure is logged at once")
	require.Empty(t, attrs(h.records()[3]), "and counts from zero")
}

func TestResolvedIsNoLouderThanTheFailures(t *testing.T) {
	t.Parallel()
	l, _, h, log := setup()
	ctx := context.Background()
	l.Log(ctx, log, slog.LevelDebug, "poll", "poll failed")
	l.Resolved(ctx, log, "poll", "poll works again")
	require.Equal(t, slog.LevelDebug, h.records()[1].Level)
}

func TestClearForgetsSilently(t *testing.T) {
	t.Parallel()
	l, _, h, log := setup()
	ctx := context.Background()
	l.Log(ctx, log, slog.LevelError, "k", "failed")
	l.Log(ctx, log, slog.LevelError, "k", "failed")
	l.Clear("k")
	l.Clear("unknown")
	require.Len(t, h.records(), 1)
	require.False(t, l.Resolved(ctx, log, "k", "recovered"))
	require.True(t, l.Log(ctx, log, slog.LevelError, "k", "failed"))
	require.Empty(t, attrs(h.records()[1]))
}

func TestDisabledLevelsAreNeitherLoggedNorCounted(t *testing.T) {
	t.Parallel()
	l, _, h, log := setup()
	h.level = slog.LevelInfo
	ctx := context.Background()
	require.False(t, l.Log(ctx, log, slog.LevelDebug, "k", "noise"))
	require.False(t, l.Resolved(ctx, log, "k", "recovered"), "a disabled occurrence leaves no trace")
	require.Empty(t, h.records())
	require.False(t, l.Log(ctx, nil, slog.LevelError, "k", "no logger"))
}

func TestLeastRecentlySeenKeyIsEvicted(t *testing.T) {
	t.Parallel()
	l, _, h, log := setup(lograte.WithMaxKeys(2))
	ctx := context.Background()
	l.Log(ctx, log, slog.LevelWarn, "a", "failed")
	l.Log(ctx, log, slog.LevelWarn, "b", "failed")
	require.False(t, l.Log(ctx, log, slog.LevelWarn, "a", "failed"), "a is now the most recently seen")
	l.Log(ctx, log, slog.LevelWarn, "c", "failed") // evicts b
	require.False(t, l.Log(ctx, log, slog.LevelWarn, "a", "failed"), "a is still remembered")
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "b", "failed"), "b was forgotten, so this is a first occurrence")
	require.False(t, l.Resolved(ctx, log, "c", "recovered"), "b's return evicted c")
	require.Len(t, h.records(), 4)
}

func TestCallerArgsAreNotModified(t *testing.T) {
	t.Parallel()
	l, c, _, log := setup()
	ctx := context.Background()
	args := make([]any, 2, 8)
	args[0], args[1] = "error", "refused"
	l.Log(ctx, log, slog.LevelWarn, "k", "failed", args...)
	l.Log(ctx, log, slog.LevelWarn, "k", "failed", args...)
	c.Advance(time.Minute)
	l.Log(ctx, log, slog.LevelWarn, "k", "failed", args...)
	l.Resolved(ctx, log, "k", "recovered", args...)
	require.Equal(t, []any{"error", "refused"}, args)
	require.Equal(t, []any{nil, nil}, args[2:4], "nothing was written past the caller's length")
}

func TestSourceIsTheCaller(t *testing.T) {
	t.Parallel()
	l, _, h, log := setup()
	ctx := context.Background()
	l.Log(ctx, log, slog.LevelWarn, "k", "failed")
	l.Resolved(ctx, log, "k", "recovered")
	for _, r := range h.records() {
		f, _ := runtime.CallersFrames([]uintptr{r.PC}).Next()
		require.True(t, strings.HasSuffix(f.File, "limiter_test.go"), "source is %s:%d", f.File, f.Line)
	}
}

func TestZeroLimiterLogsEverything(t *testing.T) {
	t.Parallel()
	var l lograte.Limiter
	h := &recorder{}
	log := slog.New(h)
	ctx := context.Background()
	for range 3 {
		require.True(t, l.Log(ctx, log, slog.LevelWarn, "k", "failed"))
	}
	require.True(t, l.Resolved(ctx, log, "k", "recovered"))
	require.Equal(t, int64(3), attrs(h.records()[3])["failures"])
}

func TestConcurrentOccurrencesAreCountedOnce(t *testing.T) {
	t.Parallel()
	l, c, h, log := setup()
	ctx := context.Background()
	const goroutines, each = 8, 500
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				l.Log(ctx, log, slog.LevelWarn, "shared", "failed")
			}
		})
	}
	wg.Wait()
	require.Len(t, h.records(), 1)
	c.Advance(10 * time.Second)
	l.Log(ctx, log, slog.LevelWarn, "shared", "failed")
	recs := h.records()
	require.Len(t, recs, 2)
	require.Equal(t, int64(goroutines*each-1), attrs(recs[1])["repeated"])
}

// TestConcurrentEviction is for the race detector: many goroutines create, evict, resolve and clear keys.
func TestConcurrentEviction(t *testing.T) {
	t.Parallel()
	l, c, _, log := setup(lograte.WithMaxKeys(3))
	ctx := context.Background()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				key := string(rune('a' + (g+i)%7))
				switch i % 5 {
				case 3:
					l.Resolved(ctx, log, key, "recovered")
				case 4:
					l.Clear(key)
				default:
					l.Log(ctx, log, slog.LevelWarn, key, "failed")
				}
				if i%50 == 0 {
					c.Advance(time.Second)
				}
			}
		})
	}
	wg.Wait()
	l.Clear("z")
	require.True(t, l.Log(ctx, log, slog.LevelWarn, "z", "failed"), "still works after the churn")
}
