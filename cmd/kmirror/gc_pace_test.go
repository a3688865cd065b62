package main

import (
	"os"
	"runtime/debug"
	"testing"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/source"
)

// The slower GC pace is for workers whose records go through Go; a C-path worker keeps Go's default, and a
// GOGC the operator set always wins.
func TestGCPaceFollowsTheDataPath(t *testing.T) {
	if v, set := os.LookupEnv("GOGC"); set {
		os.Unsetenv("GOGC")
		t.Cleanup(func() { os.Setenv("GOGC", v) })
	}
	t.Cleanup(func() { debug.SetGCPercent(100) })
	for _, tc := range []struct {
		data source.DataPath
		eos  mirrorconfig.ExactlyOnceSourceSupport
		want int
	}{
		{source.DataPathAuto, mirrorconfig.ExactlyOnceSourceDisabled, 100},
		{source.DataPathC, mirrorconfig.ExactlyOnceSourceDisabled, 100},
		{source.DataPathGo, mirrorconfig.ExactlyOnceSourceDisabled, goPathGCPercent},
		{source.DataPathAuto, mirrorconfig.ExactlyOnceSourceEnabled, goPathGCPercent},
	} {
		debug.SetGCPercent(100)
		paceGC(tc.data, tc.eos)
		if got := debug.SetGCPercent(100); got != tc.want {
			t.Errorf("--data-path=%s, exactly-once %s: GC percent %d, want %d", tc.data, tc.eos, got, tc.want)
		}
	}
	t.Setenv("GOGC", "50")
	debug.SetGCPercent(50)
	paceGC(source.DataPathGo, mirrorconfig.ExactlyOnceSourceDisabled)
	if got := debug.SetGCPercent(100); got != 50 {
		t.Errorf("GOGC=50 set: GC percent %d after paceGC", got)
	}
}
