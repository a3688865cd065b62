package tasks

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/kmirror/kmirror/balance"
	"github.com/kmirror/kmirror/store"
)

// rateFreshness is how old a task's reported rates may be to count for its worker's load.
const rateFreshness = 15 * time.Second

// workerLoad weighs the tasks over the workers by the byte rates they report, with the rules the connectors use
// for partitions over tasks (package balance): a worker that carries more than 1.5x the mean for a sustained
// minute exchanges its hottest tasks one for one with the coldest tasks of the same connector on the coolest
// worker. Exchanges keep every count placement.plan evens out (per connector and in total), so the two never
// undo each other; a worker takes part in one exchange at a time and then cools while its new rates come in.
type workerLoad struct {
	b *balance.Balancer[store.Unit]
}

func newWorkerLoad() *workerLoad {
	return &workerLoad{b: balance.New(balance.DefaultParams(), func(a, b store.Unit) int {
		return cmp.Or(cmp.Compare(a.Connector, b.Connector), cmp.Compare(a.Task, b.Task))
	}, func(u store.Unit) string { return u.Connector })}
}

// exchange returns the reassignments of this round's exchanges and a reason for each, given the live workers,
// the current assignments and the tasks' rates (a task without one counts as idle).
func (w *workerLoad) exchange(now time.Time, workers []string, current []store.Assignment, rates map[store.Unit]float64) ([]store.Reassignment, []string) {
	ids := slices.Sorted(slices.Values(workers))
	bin := make(map[string]int, len(ids))
	for i, id := range ids {
		bin[id] = i
	}
	bins := make([][]store.Unit, len(ids))
	measured := make(map[store.Unit]float64)
	for _, a := range current {
		i, live := bin[a.WorkerID]
		if !live || a.Task == store.ConnectorUnit {
			continue
		}
		bins[i] = append(bins[i], a.Unit)
		measured[a.Unit] = rates[a.Unit]
	}
	var changes []store.Reassignment
	var reasons []string
	for _, m := range w.b.Step(now, bins, measured) {
		for i := range m.Hot {
			changes = append(changes, store.Reassignment{Unit: m.Hot[i], WorkerID: ids[m.To]},
				store.Reassignment{Unit: m.Cold[i], WorkerID: ids[m.From]})
		}
		reasons = append(reasons, m.Reason(func(i int) string { return fmt.Sprintf("worker %s", ids[i]) }))
	}
	return changes, reasons
}
