package api

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// unitNotices are the typed notices of one connector instance (task null) or task.
type unitNotices struct {
	Task     *int            `json:"task"`
	State    string          `json:"state"`
	WorkerID string          `json:"worker_id"`
	Notices  []kmtype.Notice `json:"notices"`
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
	c, err := s.Store.GetConnector(r.Context(), name)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	out := noticesBody{Name: name, Units: make([]unitNotices, 0, len(tasks)+1)}
	for i, st := range append([]store.Status{conn}, tasks...) {
		u := unitNotices{State: st.State, WorkerID: st.WorkerID, Notices: st.Notices}
		if i > 0 {
			id := st.Task
			u.Task = &id
		} else if c.TakenOver != nil {
			u.Notices = append([]kmtype.Notice{takeoverNotice(*c.TakenOver)}, u.Notices...)
		}
		if u.Notices == nil {
			u.Notices = []kmtype.Notice{}
		}
		out.Units = append(out.Units, u)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// NoticeTookOverFromMM2 is the kind of the info notice a connector declared from an mm2.properties shows for as
// long as it exists when it took over from the Java MM2 it replaces (a source connector MM2's offsets, a
// checkpoint connector MM2's checkpoints): it says where it started from, and is no problem.
const NoticeTookOverFromMM2 = "took_over_from_mm2"

func takeoverNotice(t store.Takeover) kmtype.Notice {
	return kmtype.Notice{Kind: NoticeTookOverFromMM2, Level: kmtype.NoticeLevelInfo, Topic: t.Topic, Message: takeoverMessage(t)}
}

// takeoverMessage says what a connector took over: a source connector MM2's offsets, a checkpoint connector
// the checkpoints it continues from.
func takeoverMessage(t store.Takeover) string {
	at := t.At.UTC().Format(time.RFC3339)
	if t.Groups > 0 {
		return fmt.Sprintf("took over from Java MM2: continues from the checkpoints of %s (%s) found on %s at %s",
			counted(t.Groups, "group"), counted(t.Partitions, "partition"), t.Topic, at)
	}
	return fmt.Sprintf("took over from Java MM2: offsets of %s imported from %s at %s", counted(t.Partitions, "partition"), t.Topic, at)
}

// counted is "1 group", "2 groups".
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
