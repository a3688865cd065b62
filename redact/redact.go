package redact

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
)

// Hidden replaces a hidden value, as the REST API shows a secret.
const Hidden = "[hidden]"

// MinLen is the length below which a value is not hidden: replacing "1" or "ssl" everywhere would garble
// every text and hide nothing worth hiding.
const MinLen = 4

// maxValues bounds what a Values remembers: each rotation of a secret adds one. Past it the oldest are forgotten.
const maxValues = 4096

// Values is a set of values to hide. The zero value is empty and ready; a nil *Values hides nothing.
type Values struct {
	mu    sync.Mutex
	order []string // oldest first
	set   map[string]bool
	r     atomic.Pointer[strings.Replacer]
}

// Add remembers values to hide from now on; those shorter than MinLen are ignored.
func (v *Values) Add(values ...string) {
	if v == nil {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	changed := false
	for _, s := range values {
		if len(s) < MinLen || v.set[s] {
			continue
		}
		if v.set == nil {
			v.set = map[string]bool{}
		}
		v.set[s] = true
		v.order = append(v.order, s)
		changed = true
	}
	if !changed {
		return
	}
	for len(v.order) > maxValues {
		delete(v.set, v.order[0])
		v.order = v.order[1:]
	}
	// Longest first: strings.Replacer tries its pairs in order, so a value that contains another is replaced
	// whole rather than leaving its remainder behind.
	byLen := slices.Clone(v.order)
	slices.SortFunc(byLen, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(byLen))
	for _, s := range byLen {
		pairs = append(pairs, s, Hidden)
	}
	v.r.Store(strings.NewReplacer(pairs...))
}

// String returns s with every remembered value replaced by Hidden.
func (v *Values) String(s string) string {
	if v == nil || s == "" {
		return s
	}
	r := v.r.Load()
	if r == nil {
		return s
	}
	return r.Replace(s)
}

// Handler wraps next so that no record it writes carries a remembered value, in its message or in any
// attribute (errors and other values are hidden in their text form). A nil v returns next.
func (v *Values) Handler(next slog.Handler) slog.Handler {
	if v == nil {
		return next
	}
	return &handler{v: v, next: next}
}

type handler struct {
	v    *Values
	next slog.Handler
}

func (h *handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if h.v.r.Load() == nil {
		return h.next.Handle(ctx, r)
	}
	out := slog.NewRecord(r.Time, r.Level, h.v.String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	// Attributes bound now are hidden now; a value remembered later is not hidden from them. Loggers bind
	// only fixed names (logger, connector, task), never client settings.
	scrubbed := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		scrubbed[i] = h.attr(a)
	}
	return &handler{v: h.v, next: h.next.WithAttrs(scrubbed)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{v: h.v, next: h.next.WithGroup(name)}
}

func (h *handler) attr(a slog.Attr) slog.Attr {
	val := a.Value.Resolve()
	switch val.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.v.String(val.String()))
	case slog.KindGroup:
		group := val.Group()
		out := make([]slog.Attr, len(group))
		for i, g := range group {
			out[i] = h.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		// An error or a value with its own text: hidden in the text it would be written as.
		s := val.String()
		if hidden := h.v.String(s); hidden != s {
			return slog.String(a.Key, hidden)
		}
	}
	return slog.Attr{Key: a.Key, Value: val}
}
