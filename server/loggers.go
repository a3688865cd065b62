package server

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kmirror/kmirror/api"
)

// RootLogger is the name of the logger every other logger inherits its level from.
const RootLogger = "root"

// levels maps Connect's (log4j's) level names to slog levels.
var levels = map[string]slog.Level{
	"TRACE": slog.LevelDebug - 4,
	"DEBUG": slog.LevelDebug,
	"INFO":  slog.LevelInfo,
	"WARN":  slog.LevelWarn,
	"ERROR": slog.LevelError,
	"FATAL": slog.LevelError + 4,
	"OFF":   slog.Level(math.MaxInt32),
}

// Loggers is the process's tree of named loggers ("kmirror.tasks" is a child of "kmirror"), whose levels can
// be changed at run time through /admin/loggers, as log4j's can in Connect.
type Loggers struct {
	base slog.Handler

	mu       sync.RWMutex
	explicit map[string]explicitLevel // levels set by configuration or the API
	known    map[string]bool          // every logger handed out
}

type explicitLevel struct {
	level        string
	lastModified *int64
}

// NewLoggers returns a logger tree writing to base with the root logger at rootLevel (a Connect level name).
func NewLoggers(base slog.Handler, rootLevel string) (*Loggers, error) {
	rootLevel = strings.ToUpper(rootLevel)
	if _, ok := levels[rootLevel]; !ok {
		return nil, fmt.Errorf("invalid log level %q: use one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF", rootLevel)
	}
	return &Loggers{
		base:     base,
		explicit: map[string]explicitLevel{RootLogger: {level: rootLevel}},
		known:    map[string]bool{RootLogger: true},
	}, nil
}

// Logger returns the named logger; its records carry logger=name.
func (l *Loggers) Logger(name string) *slog.Logger {
	l.mu.Lock()
	l.known[name] = true
	l.mu.Unlock()
	return slog.New(&namedHandler{loggers: l, name: name, next: l.base.WithAttrs([]slog.Attr{slog.String("logger", name)})})
}

// Levels returns the explicitly set levels, as GET /admin/loggers lists them.
func (l *Loggers) Levels() map[string]api.LoggerLevel {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[string]api.LoggerLevel, len(l.explicit))
	for name, e := range l.explicit {
		out[name] = api.LoggerLevel{Level: e.level, LastModified: e.lastModified}
	}
	return out
}

// Level returns the effective level of a known logger.
func (l *Loggers) Level(name string) (api.LoggerLevel, bool) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if strings.EqualFold(name, RootLogger) {
		name = RootLogger
	}
	if !l.known[name] && l.explicitLocked(name) == nil {
		return api.LoggerLevel{}, false
	}
	e := l.effectiveLocked(name)
	return api.LoggerLevel{Level: e.level, LastModified: e.lastModified}, true
}

// Set sets the level of name and of every known logger below it, and returns the affected names, sorted.
func (l *Loggers) Set(name, level string) ([]string, error) {
	return l.set(name, level, time.Now().UnixMilli())
}

// SetAt is Set with the modification time of a cluster-wide change.
func (l *Loggers) SetAt(name, level string, lastModified int64) ([]string, error) {
	return l.set(name, level, lastModified)
}

func (l *Loggers) set(name, level string, at int64) ([]string, error) {
	level = strings.ToUpper(level)
	if _, ok := levels[level]; !ok {
		return nil, fmt.Errorf("invalid log level '%s'.", level)
	}
	if strings.EqualFold(name, RootLogger) {
		name = RootLogger
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	affected := []string{name}
	for other := range l.known {
		if other != name && (name == RootLogger || strings.HasPrefix(other, name+".")) {
			affected = append(affected, other)
		}
	}
	for _, n := range affected {
		l.explicit[n] = explicitLevel{level: level, lastModified: &at}
	}
	l.known[name] = true
	slices.Sort(affected)
	return affected, nil
}

// LastModified returns the newest modification time among explicit levels, to skip re-applying cluster levels.
func (l *Loggers) LastModified() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var newest int64
	for e := range maps.Values(l.explicit) {
		if e.lastModified != nil && *e.lastModified > newest {
			newest = *e.lastModified
		}
	}
	return newest
}

func (l *Loggers) explicitLocked(name string) *explicitLevel {
	if e, ok := l.explicit[name]; ok {
		return &e
	}
	return nil
}

// effectiveLocked walks up the dotted hierarchy to the nearest explicit level.
func (l *Loggers) effectiveLocked(name string) explicitLevel {
	for n := name; ; {
		if e, ok := l.explicit[n]; ok {
			return e
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			return l.explicit[RootLogger]
		}
		n = n[:i]
	}
}

func (l *Loggers) enabled(name string, level slog.Level) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return level >= levels[l.effectiveLocked(name).level]
}

// namedHandler filters records by its logger's current level before handing them on.
type namedHandler struct {
	loggers *Loggers
	name    string
	next    slog.Handler
}

func (h *namedHandler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.loggers.enabled(h.name, level)
}

func (h *namedHandler) Handle(ctx context.Context, r slog.Record) error { return h.next.Handle(ctx, r) }

func (h *namedHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &namedHandler{loggers: h.loggers, name: h.name, next: h.next.WithAttrs(attrs)}
}

func (h *namedHandler) WithGroup(name string) slog.Handler {
	return &namedHandler{loggers: h.loggers, name: h.name, next: h.next.WithGroup(name)}
}
