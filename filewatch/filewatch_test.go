package filewatch_test

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/filewatch"
)

func TestPollCallsOncePerChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	require.NoError(t, os.WriteFile(a, []byte("1"), 0o600))
	require.NoError(t, os.WriteFile(b, []byte("x"), 0o600))
	initial, err := filewatch.Read(a, b)
	require.NoError(t, err)

	var mu sync.Mutex
	var seen []string
	var failures []error
	snapshot := func() ([]string, int) {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...), len(failures)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		filewatch.Poll(ctx, 5*time.Millisecond, filewatch.Sum(initial), []string{a, b}, func(c [][]byte) {
			mu.Lock()
			seen = append(seen, string(c[0])+string(c[1]))
			mu.Unlock()
		}, func(err error) {
			mu.Lock()
			failures = append(failures, err)
			mu.Unlock()
		})
	}()
	defer func() { cancel(); <-done }()

	// Same bytes rewritten (a new mtime): no call.
	require.NoError(t, os.WriteFile(a, []byte("1"), 0o600))
	// Moving a byte from one file to the other changes the sum, though the files joined read "1x" as before.
	require.NoError(t, os.WriteFile(b, []byte("1x"), 0o600))
	require.NoError(t, os.WriteFile(a, []byte(""), 0o600))
	require.Eventually(t, func() bool { s, _ := snapshot(); return len(s) > 0 && s[len(s)-1] == "1x" }, 5*time.Second, time.Millisecond)

	// A missing file is a failure, not a change; its return with other bytes is one change.
	require.NoError(t, os.Remove(a))
	require.Eventually(t, func() bool { _, n := snapshot(); return n > 0 }, 5*time.Second, time.Millisecond)
	require.NoError(t, os.WriteFile(a, []byte("2"), 0o600))
	require.Eventually(t, func() bool { s, _ := snapshot(); return s[len(s)-1] == "21x" }, 5*time.Second, time.Millisecond)
	s, _ := snapshot()
	for i := 1; i < len(s); i++ {
		require.NotEqual(t, s[i-1], s[i], "the same contents twice in a row: %v", s)
	}
	mu.Lock()
	defer mu.Unlock()
	require.ErrorIs(t, failures[0], os.ErrNotExist)
	require.ErrorContains(t, failures[0], "read "+a)
}
