package tasks

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
)

func unit(c string, task int) store.Unit { return store.Unit{Connector: c, Task: task} }

// Two connectors of four tasks over two workers, evenly by count, every busy task on w1. After a sustained minute
// w1 exchanges tasks with w2, each for a colder task of its own connector, so that each connector keeps its
// spread and the counts placement.plan keeps stay as they are.
func TestWorkerLoadExchangesTasksOfOneConnector(t *testing.T) {
	current := []store.Assignment{
		{Unit: unit("a", store.ConnectorUnit), WorkerID: "w1"},
		{Unit: unit("a", 0), WorkerID: "w1"}, {Unit: unit("a", 1), WorkerID: "w1"},
		{Unit: unit("a", 2), WorkerID: "w2"}, {Unit: unit("a", 3), WorkerID: "w2"},
		{Unit: unit("b", 0), WorkerID: "w1"}, {Unit: unit("b", 1), WorkerID: "w1"},
		{Unit: unit("b", 2), WorkerID: "w2"}, {Unit: unit("b", 3), WorkerID: "w2"},
		{Unit: unit("gone", 0), WorkerID: "w3"}, // a dead worker's: not weighed
	}
	rates := map[store.Unit]float64{unit("a", 0): 8 << 20, unit("a", 1): 8 << 20, unit("a", 2): 100 << 10, unit("a", 3): 50 << 10,
		unit("b", 0): 1 << 20, unit("b", 1): 1 << 20} // b's tasks on w2 report nothing: idle
	w := newWorkerLoad()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for range 6 {
		changes, _ := w.exchange(now, []string{"w2", "w1"}, current, rates)
		require.Empty(t, changes, "nothing moves before the overload has lasted a minute")
		now = now.Add(10 * time.Second)
	}
	changes, reasons := w.exchange(now, []string{"w2", "w1"}, current, rates)
	require.Equal(t, []store.Reassignment{
		{Unit: unit("a", 0), WorkerID: "w2"}, {Unit: unit("a", 3), WorkerID: "w1"}, // a hot task of a for a's coldest
		{Unit: unit("b", 0), WorkerID: "w2"}, {Unit: unit("b", 2), WorkerID: "w1"}, // and one of b's for an idle one of b
	}, changes)
	require.Len(t, reasons, 1)
	require.Contains(t, reasons[0], "worker w1 carried")
	require.Contains(t, reasons[0], "worker w2")

	// Applied, the loads are even: nothing more moves, however long the rates hold.
	current[1].WorkerID, current[4].WorkerID, current[5].WorkerID, current[7].WorkerID = "w2", "w1", "w2", "w1"
	for range 30 {
		now = now.Add(10 * time.Second)
		changes, _ = w.exchange(now, []string{"w1", "w2"}, current, rates)
		require.Empty(t, changes)
	}
}

// BenchmarkWorkerLoad is one leader round's weighing of 400 tasks (8 connectors of 50) over 50 workers, with
// the tasks of one connector hot: the cost every round pays, and the exchanges until the load is even.
func BenchmarkWorkerLoad(b *testing.B) {
	var workers []string
	for i := range 50 {
		workers = append(workers, fmt.Sprintf("w%02d", i))
	}
	var current []store.Assignment
	rates := map[store.Unit]float64{}
	for c := range 8 {
		for task := range 50 {
			u := unit(fmt.Sprintf("c%d", c), task)
			current = append(current, store.Assignment{Unit: u, WorkerID: workers[(c*50+task)%50]})
			rates[u] = 1 << 20
			if c == 0 && task < 10 {
				rates[u] = 40 << 20                                // ten hot tasks of 40 MiB/s
				current[len(current)-1].WorkerID = workers[task%2] // packed on two workers
			}
		}
	}
	var exchanges int
	for b.Loop() {
		w := newWorkerLoad()
		cur := slices.Clone(current)
		exchanges = 0
		now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
		for range 60 { // ten minutes of rounds every 10 s
			changes, _ := w.exchange(now, workers, cur, rates)
			exchanges += len(changes) / 2
			for _, c := range changes {
				for i := range cur {
					if cur[i].Unit == c.Unit {
						cur[i].WorkerID = c.WorkerID
					}
				}
			}
			now = now.Add(10 * time.Second)
		}
	}
	b.ReportMetric(float64(exchanges), "tasks-exchanged/change")
}
