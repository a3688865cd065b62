package web

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
)

type workersData struct {
	Title   string
	Workers workers
}

func (h *Handler) workersPage(w http.ResponseWriter, r *http.Request, fragment bool) error {
	d := workersData{Title: "Workers"}
	if err := h.api.get(r.Context(), "/workers", &d.Workers); err != nil {
		return err
	}
	h.renderList(w, r, fragment, "workers", d)
	return nil
}

type groupView struct {
	group
	Offsets []groupOffset
	Error   string
}

type groupsData struct {
	Title  string
	Name   string
	Groups []groupView
}

// maxGroupsShown bounds the per-group offset calls of one page; the rest are listed without offsets.
const maxGroupsShown = 50

// groupsPage is the failover view of a checkpoint connector: each group's position on the source and where it
// would resume on the target.
func (h *Handler) groupsPage(w http.ResponseWriter, r *http.Request, name string, fragment bool) error {
	d := groupsData{Title: "Groups of " + name, Name: name}
	var body struct {
		Groups []group `json:"groups"`
	}
	if err := h.api.get(r.Context(), connectorPath(name, "groups"), &body); err != nil {
		return err
	}
	slices.SortFunc(body.Groups, func(a, b group) int { return strings.Compare(a.Group, b.Group) })
	for i, g := range body.Groups {
		v := groupView{group: g}
		if i < maxGroupsShown {
			var off struct {
				Offsets []groupOffset `json:"offsets"`
			}
			if err := h.api.get(r.Context(), connectorPath(name, "groups", pathSegment(g.Group), "offsets"), &off); err != nil {
				v.Error = err.Error()
			}
			v.Offsets = off.Offsets
		}
		d.Groups = append(d.Groups, v)
	}
	h.renderList(w, r, fragment, "groups", d)
	return nil
}

type offsetRow struct {
	Partition, Offset string
}

type offsetsData struct {
	Title string
	Name  string
	State string
	Rows  []offsetRow
	Body  string // the PATCH body in the form: the current offsets, or what the user typed
	Msg   pageMsg
}

// offsetsPage shows a connector's offsets (GET) and alters (action=alter, PATCH) or resets (action=reset,
// DELETE) them. The API allows both only while the connector is stopped; its refusal is shown as it is.
func (h *Handler) offsetsPage(w http.ResponseWriter, r *http.Request, name string) error {
	ctx := r.Context()
	d := offsetsData{Title: "Offsets of " + name, Name: name}
	if r.Method == http.MethodPost {
		if err := r.ParseForm(); err != nil {
			return &apiError{Status: http.StatusBadRequest, Message: err.Error()}
		}
		var err error
		switch r.PostForm.Get("action") {
		case "alter":
			d.Body = r.PostForm.Get("body")
			var body any
			if err = json.Unmarshal([]byte(d.Body), &body); err != nil {
				err = &apiError{Status: http.StatusBadRequest, Message: "The body is not JSON: " + err.Error()}
			} else {
				err = h.api.do(ctx, http.MethodPatch, connectorPath(name, "offsets"), body, nil)
			}
		case "reset":
			err = h.api.do(ctx, http.MethodDelete, connectorPath(name, "offsets"), nil, nil)
		default:
			err = &apiError{Status: http.StatusBadRequest, Message: "Unknown action"}
		}
		done, err := afterWrite(w, r, err, connURL(name, "offsets"),
			"Offsets "+map[string]string{"alter": "altered.", "reset": "reset."}[r.PostForm.Get("action")], &d.Msg)
		if done || err != nil {
			return err
		}
	} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return errMethod
	} else {
		d.Msg.Notice = r.URL.Query().Get("notice")
	}
	var st connectorStatus
	if err := h.api.get(ctx, connectorPath(name, "status"), &st); err != nil {
		return err
	}
	d.State = st.Connector.State
	var offs offsetsBody
	if err := h.api.get(ctx, connectorPath(name, "offsets"), &offs); err != nil {
		return err
	}
	for _, o := range offs.Offsets {
		p, _ := json.Marshal(o.Partition)
		v, _ := json.Marshal(o.Offset)
		d.Rows = append(d.Rows, offsetRow{Partition: string(p), Offset: string(v)})
	}
	if d.Body == "" {
		b, _ := json.MarshalIndent(offs, "", "  ")
		d.Body = string(b)
	}
	h.render(w, r, d.Msg.httpStatus(), "offsets", d)
	return nil
}
