package api

import (
	"errors"
	"net/http"
	"slices"

	"github.com/kmirror/kmirror/store"
)

// workerInfo is one member in GET /workers, a kmirror extension: Connect has no such endpoint, and operators
// otherwise have to guess from task statuses who runs what and who leads.
type workerInfo struct {
	ID               string     `json:"id"`
	URL              string     `json:"url"`
	Leader           bool       `json:"leader"`
	StartedAt        string     `json:"started_at"`
	HeartbeatAgeMs   int64      `json:"heartbeat_age_ms"`
	Assigned         []unitInfo `json:"assigned"`
	Draining         []unitInfo `json:"draining"` // runs this worker still holds for units that moved away
	ConnectorsCount  int        `json:"connectors"`
	TasksCount       int        `json:"tasks"`
	HandingOverCount int        `json:"handing_over"`
}

// unitInfo names a connector instance (task null) or a task.
type unitInfo struct {
	Connector string `json:"connector"`
	Task      *int   `json:"task"`
}

type workersBody struct {
	Leader  *string      `json:"leader"`
	Workers []workerInfo `json:"workers"`
}

// listWorkers is GET /workers: the members of the cluster, the leader, each one's heartbeat age by the
// database's clock, the units assigned to it and the units it is still handing over.
func (s *server) listWorkers(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	ws, err := s.Store.Workers(ctx)
	if err != nil {
		return err
	}
	ps, err := s.Store.Placements(ctx)
	if err != nil {
		return err
	}
	var leader *string
	if l, err := s.Store.Leader(ctx); err == nil {
		leader = &l.ID
	} else if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	out := workersBody{Leader: leader, Workers: []workerInfo{}}
	byID := map[string]*workerInfo{}
	for _, wk := range ws {
		out.Workers = append(out.Workers, workerInfo{
			ID: wk.ID, URL: wk.URL, Leader: leader != nil && *leader == wk.ID,
			StartedAt: wk.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z"), HeartbeatAgeMs: wk.HeartbeatAge.Milliseconds(),
			Assigned: []unitInfo{}, Draining: []unitInfo{},
		})
	}
	for i := range out.Workers {
		byID[out.Workers[i].ID] = &out.Workers[i]
	}
	for _, p := range ps {
		u := unitInfo{Connector: p.Connector}
		if p.Task != store.ConnectorUnit {
			u.Task = &p.Task
		}
		if wk, ok := byID[p.WorkerID]; ok {
			wk.Assigned = append(wk.Assigned, u)
			if p.Task == store.ConnectorUnit {
				wk.ConnectorsCount++
			} else {
				wk.TasksCount++
			}
		}
		if h, ok := byID[p.Holder]; ok && p.Holder != p.WorkerID {
			h.Draining = append(h.Draining, u)
			h.HandingOverCount++
		}
	}
	for i := range out.Workers {
		slices.SortStableFunc(out.Workers[i].Assigned, compareUnits)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func compareUnits(a, b unitInfo) int {
	if a.Connector != b.Connector {
		if a.Connector < b.Connector {
			return -1
		}
		return 1
	}
	ta, tb := -1, -1
	if a.Task != nil {
		ta = *a.Task
	}
	if b.Task != nil {
		tb = *b.Task
	}
	return ta - tb
}
