package tasks

import (
	"cmp"
	"slices"

	"github.com/kmirror/kmirror/store"
)

// placement is the input of one leader round.
type placement struct {
	workers  []string // live worker ids
	units    []store.Unit
	current  []store.Assignment
	restarts []store.RestartRequest
	statuses map[string][]store.Status
}

// plan computes the assignment changes of one leader round: drop assignments of units that are gone, place
// units that have no live owner on the least loaded worker, even out the load to within one unit, and turn
// restart requests into in-place reassignments with a new epoch. It returns the changes and the ids of the
// restart requests they satisfy.
func (p placement) plan() ([]store.Reassignment, []int64) {
	if len(p.workers) == 0 {
		return nil, nil
	}
	live := make(map[string]bool, len(p.workers))
	load := make(map[string]int, len(p.workers))
	for _, w := range p.workers {
		live[w] = true
		load[w] = 0
	}
	exists := make(map[store.Unit]bool, len(p.units))
	for _, u := range p.units {
		exists[u] = true
	}

	owner := make(map[store.Unit]string, len(p.units))
	changed := make(map[store.Unit]*store.Reassignment)
	var order []store.Unit
	change := func(u store.Unit, worker string) *store.Reassignment {
		if c, ok := changed[u]; ok {
			c.WorkerID = worker
			return c
		}
		c := &store.Reassignment{Unit: u, WorkerID: worker}
		changed[u] = c
		order = append(order, u)
		return c
	}

	for _, a := range p.current {
		switch {
		case !exists[a.Unit]:
			change(a.Unit, "")
		case live[a.WorkerID]:
			owner[a.Unit] = a.WorkerID
			load[a.WorkerID]++
		}
	}
	leastLoaded := func() string {
		return slices.MinFunc(p.workers, func(a, b string) int {
			return cmp.Or(cmp.Compare(load[a], load[b]), cmp.Compare(a, b))
		})
	}
	for _, u := range p.units {
		if _, ok := owner[u]; ok {
			continue
		}
		w := leastLoaded()
		owner[u] = w
		load[w]++
		change(u, w)
	}

	// Even out the load: move the highest-numbered units off the busiest worker until no worker has two more
	// units than another. Each move restarts the unit elsewhere, so move no more than needed.
	for {
		busiest := slices.MaxFunc(p.workers, func(a, b string) int {
			return cmp.Or(cmp.Compare(load[a], load[b]), cmp.Compare(b, a))
		})
		idlest := leastLoaded()
		if load[busiest]-load[idlest] <= 1 {
			break
		}
		var victim store.Unit
		found := false
		for i := len(p.units) - 1; i >= 0; i-- {
			if owner[p.units[i]] == busiest {
				victim, found = p.units[i], true
				break
			}
		}
		if !found {
			break
		}
		owner[victim] = idlest
		load[busiest]--
		load[idlest]++
		change(victim, idlest)
	}

	var handled []int64
	for _, r := range p.restarts {
		handled = append(handled, r.ID)
		for _, u := range p.restartUnits(r, exists) {
			change(u, owner[u]).Restarting = true
		}
	}

	out := make([]store.Reassignment, 0, len(order))
	for _, u := range order {
		out = append(out, *changed[u])
	}
	return out, handled
}

// restartUnits lists the units a restart request restarts, by Connect's rules (RestartRequest.java): the
// connector if !onlyFailed or it FAILED; each task if includeTasks and (!onlyFailed or it FAILED).
func (p placement) restartUnits(r store.RestartRequest, exists map[store.Unit]bool) []store.Unit {
	if r.Task != nil {
		u := store.Unit{Connector: r.Connector, Task: *r.Task}
		if exists[u] {
			return []store.Unit{u}
		}
		return nil
	}
	failed := make(map[int]bool)
	for _, st := range p.statuses[r.Connector] {
		failed[st.Task] = st.State == store.StateFailed
	}
	var out []store.Unit
	for _, u := range p.units {
		if u.Connector != r.Connector {
			continue
		}
		if u.Task == store.ConnectorUnit {
			if !r.OnlyFailed || failed[u.Task] {
				out = append(out, u)
			}
			continue
		}
		if r.IncludeTasks && (!r.OnlyFailed || failed[u.Task]) {
			out = append(out, u)
		}
	}
	return out
}
