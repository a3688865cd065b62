package tasks

import (
	"cmp"
	"maps"
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
// units that have no live owner, spread each connector's units evenly over the workers and then the total
// load, and turn restart requests into in-place reassignments with a new epoch. It returns the changes and the
// ids of the restart requests they satisfy. Each move is a hand-over (the old run drains and commits before
// the new one starts), so moves cost a pause, not duplicates; still, no more units move than needed.
func (p placement) plan() ([]store.Reassignment, []int64) {
	if len(p.workers) == 0 {
		return nil, nil
	}
	live := make(map[string]bool, len(p.workers))
	load := make(map[string]int, len(p.workers))
	perConn := make(map[string]map[string]int) // connector -> worker -> units
	for _, w := range p.workers {
		live[w] = true
	}
	exists := make(map[store.Unit]bool, len(p.units))
	for _, u := range p.units {
		exists[u] = true
		if perConn[u.Connector] == nil {
			perConn[u.Connector] = make(map[string]int, len(p.workers))
		}
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
	put := func(u store.Unit, w string) {
		if old, ok := owner[u]; ok {
			load[old]--
			perConn[u.Connector][old]--
		}
		owner[u] = w
		load[w]++
		perConn[u.Connector][w]++
	}

	for _, a := range p.current {
		switch {
		case !exists[a.Unit]:
			change(a.Unit, "")
		case live[a.WorkerID]:
			put(a.Unit, a.WorkerID)
		}
	}
	// by orders workers by the connector's units on them, then by their total load, then by id.
	by := func(conn string) func(a, b string) int {
		return func(a, b string) int {
			return cmp.Or(cmp.Compare(perConn[conn][a], perConn[conn][b]), cmp.Compare(load[a], load[b]), cmp.Compare(a, b))
		}
	}
	for _, u := range p.units {
		if _, ok := owner[u]; ok {
			continue
		}
		w := slices.MinFunc(p.workers, by(u.Connector))
		put(u, w)
		change(u, w)
	}
	// victim is the highest-numbered unit of conn (any connector when conn is "") on worker w.
	victim := func(w, conn string) (store.Unit, bool) {
		for i := len(p.units) - 1; i >= 0; i-- {
			if u := p.units[i]; owner[u] == w && (conn == "" || u.Connector == conn) {
				return u, true
			}
		}
		return store.Unit{}, false
	}
	// Spread each connector: no worker runs two more of its units than another.
	for _, conn := range slices.Sorted(maps.Keys(perConn)) {
		for {
			busiest := slices.MaxFunc(p.workers, by(conn))
			idlest := slices.MinFunc(p.workers, by(conn))
			if perConn[conn][busiest]-perConn[conn][idlest] <= 1 {
				break
			}
			u, ok := victim(busiest, conn)
			if !ok {
				break
			}
			put(u, idlest)
			change(u, idlest)
		}
	}
	// Even out the total load without unbalancing a connector: move a unit of a connector that the busiest
	// worker runs more of than the idlest.
	total := func(a, b string) int { return cmp.Or(cmp.Compare(load[a], load[b]), cmp.Compare(a, b)) }
	for {
		busiest, idlest := slices.MaxFunc(p.workers, total), slices.MinFunc(p.workers, total)
		if load[busiest]-load[idlest] <= 1 {
			break
		}
		moved := false
		for i := len(p.units) - 1; i >= 0 && !moved; i-- {
			u := p.units[i]
			if owner[u] == busiest && perConn[u.Connector][busiest] > perConn[u.Connector][idlest] {
				put(u, idlest)
				change(u, idlest)
				moved = true
			}
		}
		if !moved {
			break
		}
	}

	var handled []int64
	for _, r := range p.restarts {
		handled = append(handled, r.ID)
		for _, u := range p.restartUnits(r, exists) {
			c := change(u, owner[u])
			c.Restarting = true
			// Connect writes RESTARTING only for the units of a restart plan (AbstractHerder.onRestart).
			c.ShowRestarting = c.ShowRestarting || r.IncludeTasks || r.OnlyFailed
		}
	}

	out := make([]store.Reassignment, 0, len(order))
	for _, u := range order {
		if c := changed[u]; c.Restarting || !p.unchanged(*c) {
			out = append(out, *c)
		}
	}
	return out, handled
}

// unchanged tells whether a change puts a unit back where it already is (a unit moved away and back in one
// round), which would only restart it.
func (p placement) unchanged(c store.Reassignment) bool {
	for _, a := range p.current {
		if a.Unit == c.Unit {
			return a.WorkerID == c.WorkerID
		}
	}
	return false
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
