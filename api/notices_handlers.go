package api

import (
	"net/http"

	"github.com/kmirror/kmirror/store"
)

// unitNotices are the typed notices of one connector instance (task null) or task.
type unitNotices struct {
	Task     *int           `json:"task"`
	State    string         `json:"state"`
	WorkerID string         `json:"worker_id"`
	Notices  []store.Notice `json:"notices"`
}

type noticesBody struct {
	Name  string        `json:"name"`
	Units []unitNotices `json:"units"`
}

// getNotices is GET /connectors/{connector}/notices, a kmirror extension: the facts the connector and its
// tasks report beside their state — data not replicated with its offsets, a cluster unreachable, a remote
// topic gone — as typed objects, where the status has them only as the trace's text. Status objects stay
// Connect's, so clients that read them strictly are not surprised by extra fields.
func (s *server) getNotices(w http.ResponseWriter, r *http.Request) error {
	name, conn, tasks, err := s.connectorStatus(r)
	if err != nil {
		return err
	}
	out := noticesBody{Name: name, Units: make([]unitNotices, 0, len(tasks)+1)}
	for i, st := range append([]store.Status{conn}, tasks...) {
		u := unitNotices{State: st.State, WorkerID: st.WorkerID, Notices: st.Notices}
		if i > 0 {
			id := st.Task
			u.Task = &id
		}
		if u.Notices == nil {
			u.Notices = []store.Notice{}
		}
		out.Units = append(out.Units, u)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
