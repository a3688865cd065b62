// Package filewatch calls a function whenever the bytes of a set of files change.
//
// kmirror re-reads its REST users file and its TLS certificates without a restart. It polls: every interval
// it reads the files (a users file or a PEM pair is a few kilobytes) and acts when their bytes differ from the
// last ones it saw. Polling the bytes, rather than watching inotify events or modification times, sees every
// way a file gets replaced: an editor's rename over the old file, a Kubernetes Secret volume's symlink swap
// (inotify on the file itself misses both), cert-manager rewriting a file within the same mtime tick. It needs
// no goroutine per file and no dependency, and the cost is a few small reads per interval.
package filewatch

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/kmirror/kmirror/lograte"
)

// DefaultInterval is how often files are read unless the caller says otherwise: a rotated certificate or an
// added user takes effect within it.
const DefaultInterval = 2 * time.Second

// Read returns the contents of each file, in order; the error names the file that could not be read.
func Read(paths ...string) ([][]byte, error) {
	out := make([][]byte, len(paths))
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		out[i] = b
	}
	return out, nil
}

// Sum is a digest of the contents of several files, to tell whether any of them changed.
func Sum(contents [][]byte) [32]byte {
	h := sha256.New()
	for _, c := range contents {
		// The length first, so that moving bytes from one file to the next changes the sum.
		fmt.Fprintf(h, "%d:", len(c))
		h.Write(c)
	}
	var s [32]byte
	copy(s[:], h.Sum(nil))
	return s
}

// Poll reads paths every interval (DefaultInterval when <= 0) until ctx is done, and calls changed with their
// contents whenever these differ from the previous read, starting from initial (the Sum of the contents the
// caller loaded at start-up). A read that fails (a file briefly missing during a replace) calls failed, when it
// is not nil, and keeps the previous sum, so the next successful read decides. changed is called with the same
// contents once only, whatever it returns: a file that does not parse is reported once per edit, not once per
// interval.
func Poll(ctx context.Context, interval time.Duration, initial [32]byte, paths []string, changed func([][]byte), failed func(error)) {
	if interval <= 0 {
		interval = DefaultInterval
	}
	last := initial
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		contents, err := Read(paths...)
		if err != nil {
			if failed != nil {
				failed(err)
			}
			continue
		}
		if s := Sum(contents); s != last {
			last = s
			changed(contents)
		}
	}
}

// Reload polls paths as Poll does and hands each changed version to apply. A version apply refuses is logged
// as refused and ignored: what was loaded before stays, since refusing everyone, or serving nothing, because
// of a typo would be worse. A failed read is logged as unreadable at most once a minute.
func Reload(ctx context.Context, log *slog.Logger, interval time.Duration, initial [32]byte, paths []string,
	apply func([][]byte) error, refused, unreadable string) {
	readFailures := lograte.New(time.Minute)
	Poll(ctx, interval, initial, paths, func(contents [][]byte) {
		readFailures.Clear("read")
		if err := apply(contents); err != nil {
			log.Error(refused, "error", err)
		}
	}, func(err error) {
		readFailures.Log(ctx, log, slog.LevelWarn, "read", unreadable, "error", err)
	})
}
