package source

import "testing"

// fakeProcs stands in for the runtime's GOMAXPROCS: default is what SetDefaultGOMAXPROCS brings back.
type fakeProcs struct{ current, def int }

func (f *fakeProcs) procs() *cpathProcs {
	return &cpathProcs{
		set: func(n int) int {
			old := f.current
			if n > 0 {
				f.current = n
			}
			return old
		},
		restore: func() { f.current = f.def },
	}
}

func TestEachRunningCPipelineGetsAPAndTheDefaultComesBack(t *testing.T) {
	f := &fakeProcs{current: 2, def: 2}
	c := f.procs()
	first := c.hold()
	second := c.hold()
	if f.current != 4 {
		t.Fatalf("two pipelines on 2 procs: GOMAXPROCS %d, want 4", f.current)
	}
	first()
	first() // a second call changes nothing
	if f.current != 3 {
		t.Fatalf("one pipeline left: GOMAXPROCS %d, want 3", f.current)
	}
	second()
	if f.current != 2 {
		t.Fatalf("no pipeline left: GOMAXPROCS %d, want the default 2", f.current)
	}
	// The default may have changed meanwhile (a new CPU limit): the next pipeline counts from it.
	f.current, f.def = 4, 4
	third := c.hold()
	if f.current != 5 {
		t.Fatalf("one pipeline on a default of 4: GOMAXPROCS %d, want 5", f.current)
	}
	third()
}

func TestAGOMAXPROCSTheOperatorSetIsLeftAlone(t *testing.T) {
	f := &fakeProcs{current: 3, def: 2}
	c := f.procs()
	c.fixed = true
	release := c.hold()
	if f.current != 3 {
		t.Fatalf("GOMAXPROCS %d, want the operator's 3", f.current)
	}
	release()
	if f.current != 3 {
		t.Fatalf("after the pipeline: GOMAXPROCS %d, want the operator's 3", f.current)
	}
	var none *cpathProcs // a task made without a registry
	none.hold()()
}
