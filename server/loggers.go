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
	"github.com/kmirror/kmirror/redact"
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
// be changed at run time through /admin/loggers, as log4j2's can in Connect (Kafka 4.x's Loggers):
//
//   - The known loggers are root, every logger handed out by Logger (kmirror.server, kmirror.store,
//     kmirror.tasks, kmirror.connectors, kmirror.api) and every name a level change created, as
//     log4j2 creates the logger a PUT names. GET /admin/loggers lists them all.
//   - Levels are configured on root (from configuration) and on the names set through the API. A logger's
//     level is that of its nearest configured ancestor in the dotted hierarchy, root last.
//   - A level change configures the name and every configured descendant (log4j2's Configurator.setAllLevels)
//     and reports the known loggers at or below the name whose level it changed; only those get a
//     last_modified, which stays null for a logger whose level the API never changed.
type Loggers struct {
	base slog.Handler
	// hidden are the values no record may carry: what config providers resolved (see package redact).
	hidden *redact.Values

	mu         sync.RWMutex
	configured map[string]string // levels set by configuration (root) or the API
	modified   map[string]int64  // when the API last changed a logger's level, epoch milliseconds
	known      map[string]bool   // every logger handed out or created by a level change, and root
}

// NewLoggers returns a logger tree writing to base with the root logger at rootLevel (a Connect level name).
func NewLoggers(base slog.Handler, rootLevel string) (*Loggers, error) {
	rootLevel = strings.ToUpper(rootLevel)
	if _, ok := levels[rootLevel]; !ok {
		return nil, fmt.Errorf("invalid log level %q: use one of TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF", rootLevel)
	}
	hidden := &redact.Values{}
	return &Loggers{
		base:       hidden.Handler(base),
		hidden:     hidden,
		configured: map[string]string{RootLogger: rootLevel},
		modified:   map[string]int64{},
		known:      map[string]bool{RootLogger: true},
	}, nil
}

// Hidden is the set of values every logger of the tree hides: add to it what must never be logged.
func (l *Loggers) Hidden() *redact.Values { return l.hidden }

// Logger returns the named logger; its records carry logger=name. From then on GET /admin/loggers lists it.
func (l *Loggers) Logger(name string) *slog.Logger {
	name = canonicalName(name)
	l.mu.RLock()
	known := l.known[name]
	l.mu.RUnlock()
	if !known {
		l.mu.Lock()
		l.known[name] = true
		l.mu.Unlock()
	}
	return slog.New(&namedHandler{loggers: l, name: name, next: l.base.WithAttrs([]slog.Attr{slog.String("logger", name)})})
}

// Levels returns every known logger with its effective level, as GET /admin/loggers lists them.
func (l *Loggers) Levels() map[string]api.LoggerLevel {
	l.mu.RLock()
	defer l.mu.RUnlock()
	out := make(map[string]api.LoggerLevel, len(l.known))
	for name := range l.known {
		out[name] = l.levelLocked(name)
	}
	return out
}

// Level returns the effective level of a known logger.
func (l *Loggers) Level(name string) (api.LoggerLevel, bool) {
	name = canonicalName(name)
	l.mu.RLock()
	defer l.mu.RUnlock()
	if !l.known[name] {
		return api.LoggerLevel{}, false
	}
	return l.levelLocked(name), true
}

// Set sets the level of name and of every logger below it, creating the logger name if it is unknown, and
// returns the loggers whose level changed, sorted.
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
	name = canonicalName(name)
	below := func(other string) bool {
		return other == name || name == RootLogger || strings.HasPrefix(other, name+".")
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	// The level each logger in the namespace had, counting a logger this change creates at the level it
	// inherits (Connect creates the logger before comparing).
	before := map[string]string{name: l.effectiveLocked(name)}
	for other := range l.known {
		if below(other) {
			before[other] = l.effectiveLocked(other)
		}
	}
	l.known[name] = true
	for other := range l.configured {
		if below(other) {
			l.configured[other] = level
		}
	}
	l.configured[name] = level
	changed := []string{}
	for n, was := range before {
		if was != level {
			changed = append(changed, n)
			l.modified[n] = at
		}
	}
	slices.Sort(changed)
	return changed, nil
}

// LastModified returns the newest modification time of any logger, 0 if the API never changed a level.
func (l *Loggers) LastModified() int64 {
	l.mu.RLock()
	defer l.mu.RUnlock()
	var newest int64
	for at := range maps.Values(l.modified) {
		newest = max(newest, at)
	}
	return newest
}

func (l *Loggers) levelLocked(name string) api.LoggerLevel {
	lv := api.LoggerLevel{Level: l.effectiveLocked(name)}
	if at, ok := l.modified[name]; ok {
		lv.LastModified = &at
	}
	return lv
}

// effectiveLocked walks up the dotted hierarchy to the nearest configured level.
func (l *Loggers) effectiveLocked(name string) string {
	for n := name; ; {
		if level, ok := l.configured[n]; ok {
			return level
		}
		i := strings.LastIndexByte(n, '.')
		if i < 0 {
			return l.configured[RootLogger]
		}
		n = n[:i]
	}
}

func (l *Loggers) enabled(name string, level slog.Level) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return level >= levels[l.effectiveLocked(name)]
}

// canonicalName is name, with any capitalisation of "root" as RootLogger, as Connect matches it.
func canonicalName(name string) string {
	if strings.EqualFold(name, RootLogger) {
		return RootLogger
	}
	return name
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
