package source

import (
	"os"
	"runtime"
	"sync"
)

// cpathProcs keeps GOMAXPROCS at the process's default plus one for each C pipeline running in it that steps
// in its goroutine's thread. A pipeline normally steps in a thread of its own (cpath, "A thread of its own"),
// its goroutine waiting in Go's poller without a P, and takes no P here; only one whose thread could not be
// started does.
//
// Why: such a pipeline's goroutine spends most of its time inside cgo calls that block in librdkafka (waiting for
// records, for delivery reports, for pacing). A goroutine in a blocking call keeps its thread but not its P: the
// scheduler hands the P to another goroutine, and when the call returns there is often no P free, so the thread
// parks and another is woken. With eight pipelines on the default two Ps that churn was a fifth more context
// switching than the C pipe's plain threads, and with a P per pipeline it is gone: at tasks.max 4 and 8, 5 GB
// side by side, CPU per GB fell 7% (docs/benchmarks.md, "GOMAXPROCS"). Raising GOMAXPROCS adds no parallelism
// that matters here — the records move in C, which GOMAXPROCS does not bound — only Ps for blocked pipelines to
// come back to.
//
// A GOMAXPROCS the operator set (the environment variable) is left alone. When the last pipeline stops the
// runtime's default comes back (runtime.SetDefaultGOMAXPROCS), so it follows the container's CPU limit again.
type cpathProcs struct {
	mu      sync.Mutex
	fixed   bool // the operator set GOMAXPROCS
	running int
	base    int // the default when the first running pipeline started
	// set is runtime.GOMAXPROCS and restore runtime.SetDefaultGOMAXPROCS (replaced in tests).
	set     func(int) int
	restore func()
}

func newCPathProcs() *cpathProcs {
	_, fixed := os.LookupEnv("GOMAXPROCS")
	return &cpathProcs{fixed: fixed, set: runtime.GOMAXPROCS, restore: runtime.SetDefaultGOMAXPROCS}
}

// hold counts a C pipeline as running until the returned function is called (once).
func (c *cpathProcs) hold() (release func()) {
	if c == nil || c.fixed {
		return func() {}
	}
	c.mu.Lock()
	if c.running == 0 {
		c.base = c.set(0)
	}
	c.running++
	c.set(c.base + c.running)
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.running--
			if c.running == 0 {
				c.restore()
				return
			}
			c.set(c.base + c.running)
		})
	}
}
