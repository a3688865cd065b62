package web

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/connectors/clientconfig"
)

const sourceClassSuffix = "MirrorSourceConnector"

// listRow is one connector in the list.
type listRow struct {
	Name, Class, Type, State string
	DeclaredBy               string // the mm2.properties that declares it, "" for a REST-created one
	TasksRunning, Tasks      int
	Failed                   bool
	Trace                    string // the first failure's trace, connector's or a task's
	Source                   bool
	Totals                   *totals
}

type listData struct {
	Title     string
	Notice    string
	Query     string
	OnlyBad   bool
	Rows      []listRow
	Total     int
	RefreshQS string
}

func (h *Handler) listData(r *http.Request) (listData, error) {
	q := r.URL.Query()
	d := listData{Title: "Connectors", Notice: q.Get("notice"), Query: q.Get("q"), OnlyBad: q.Get("failed") != ""}
	var all map[string]expanded
	if err := h.api.get(r.Context(), "/connectors?expand=status&expand=info", &all); err != nil {
		return d, err
	}
	d.Total = len(all)
	for name, e := range all {
		row := listRow{Name: name, Class: e.Info.Config["connector.class"], Type: e.Info.Type, DeclaredBy: e.Info.DeclaredBy,
			State: e.Status.Connector.State, Tasks: len(e.Status.Tasks)}
		if row.State == "FAILED" {
			row.Failed, row.Trace = true, e.Status.Connector.Trace
		}
		for _, t := range e.Status.Tasks {
			switch t.State {
			case "RUNNING":
				row.TasksRunning++
			case "FAILED":
				if !row.Failed {
					row.Trace = t.Trace
				}
				row.Failed = true
			}
		}
		if d.Query != "" && !strings.Contains(strings.ToLower(name), strings.ToLower(d.Query)) &&
			!strings.Contains(strings.ToLower(row.Class), strings.ToLower(d.Query)) {
			continue
		}
		if d.OnlyBad && !row.Failed {
			continue
		}
		if strings.HasSuffix(row.Class, sourceClassSuffix) {
			row.Source = true
			var p partitions
			// A connector deleted meanwhile, or one whose tasks never reported, shows no figures.
			if err := h.api.get(r.Context(), connectorPath(name, "partitions"), &p); err == nil {
				row.Totals = &p.Totals
			}
		}
		d.Rows = append(d.Rows, row)
	}
	// Failing connectors first (operators look for them), then by name.
	slices.SortFunc(d.Rows, func(a, b listRow) int {
		if a.Failed != b.Failed {
			if a.Failed {
				return -1
			}
			return 1
		}
		return cmp.Compare(a.Name, b.Name)
	})
	v := r.URL.Query()
	v.Del("notice")
	d.RefreshQS = v.Encode()
	return d, nil
}

func (h *Handler) connectorsPage(w http.ResponseWriter, r *http.Request) error {
	d, err := h.listData(r)
	if err != nil {
		return err
	}
	h.render(w, r, http.StatusOK, "connectors", d)
	return nil
}

func (h *Handler) connectorsFragment(w http.ResponseWriter, r *http.Request) error {
	d, err := h.listData(r)
	if err != nil {
		return err
	}
	h.renderFragment(w, r, "connectors", "rows", d)
	return nil
}

// pageMsg is what a page says about the last action: a notice on success, the API's error verbatim otherwise.
type pageMsg struct {
	Notice, Error string
	// Status is the failed request's (the API's 403 for a read-only user, its 409, ...); 400 when zero.
	Status int
}

// httpStatus is the status of a page that shows msg: its failed request's, or 200 when nothing failed.
func (m pageMsg) httpStatus() int {
	if m.Error == "" {
		return http.StatusOK
	}
	return cmp.Or(m.Status, http.StatusBadRequest)
}

type configRow struct {
	Key, Value string
	Password   bool
}

type connectorData struct {
	Title   string
	Name    string
	Class   string
	Info    connectorInfo
	Status  connectorStatus
	Config  []configRow
	Msg     pageMsg
	Source  bool
	Groups  bool // a checkpoint connector: it has a groups view
	Live    liveData
	Stopped bool
}

// liveData is the part of a connector page that refreshes itself.
type liveData struct {
	Name       string
	Status     connectorStatus
	Source     bool
	Partitions *partitions
	PartErr    string
	TaskParts  map[int][]partitionRow
	TaskRows   map[int]taskRow
	// Flagged maps "topic-partition" to the severity of a verdict that names the partition (a straggler).
	Flagged map[string]string
}

func (h *Handler) live(r *http.Request, name string) (liveData, error) {
	d := liveData{Name: name}
	var info connectorInfo
	if err := h.api.get(r.Context(), connectorPath(name), &info); err != nil {
		return d, err
	}
	if err := h.api.get(r.Context(), connectorPath(name, "status"), &d.Status); err != nil {
		var ae *apiError
		if !errors.As(err, &ae) || ae.Status != http.StatusNotFound {
			return d, err
		}
		// A connector just created has no status until a worker picks it up: Connect's word for that.
		d.Status = connectorStatus{Name: name, Connector: unitState{State: "UNASSIGNED"}, Type: info.Type}
	}
	d.Source = strings.HasSuffix(info.Config["connector.class"], sourceClassSuffix)
	if d.Source {
		var p partitions
		if err := h.api.get(r.Context(), connectorPath(name, "partitions"), &p); err != nil {
			d.PartErr = err.Error()
		} else {
			d.Partitions = &p
			d.TaskParts = map[int][]partitionRow{}
			d.TaskRows = map[int]taskRow{}
			for _, row := range p.ByPartition {
				d.TaskParts[row.Task] = append(d.TaskParts[row.Task], row)
			}
			for _, t := range p.ByTask {
				d.TaskRows[t.Task] = t
			}
			d.Flagged = map[string]string{}
			for _, v := range p.Verdicts {
				if v.Partition != nil {
					d.Flagged[fmt.Sprintf("%s-%d", v.Topic, *v.Partition)] = v.Severity
				}
			}
		}
	}
	return d, nil
}

func (h *Handler) connectorPage(w http.ResponseWriter, r *http.Request, name string, msg pageMsg) error {
	d := connectorData{Title: name, Name: name, Msg: msg}
	if d.Msg.Notice == "" && d.Msg.Error == "" {
		d.Msg.Notice = r.URL.Query().Get("notice")
	}
	if err := h.api.get(r.Context(), connectorPath(name), &d.Info); err != nil {
		return err
	}
	d.Class = d.Info.Config["connector.class"]
	secret := h.passwordKeys(r, d.Class)
	keys := make([]string, 0, len(d.Info.Config))
	for k := range d.Info.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		row := configRow{Key: k, Value: d.Info.Config[k], Password: secret[k] || isSecretKey(k)}
		if row.Password {
			row.Value = "" // never sent to the browser
		}
		d.Config = append(d.Config, row)
	}
	live, err := h.live(r, name)
	if err != nil {
		return err
	}
	d.Live, d.Status, d.Source = live, live.Status, live.Source
	d.Groups = strings.HasSuffix(d.Class, "MirrorCheckpointConnector")
	d.Stopped = d.Status.Connector.State == "STOPPED"
	h.render(w, r, d.Msg.httpStatus(), "connector", d)
	return nil
}

func (h *Handler) liveFragment(w http.ResponseWriter, r *http.Request, name string) error {
	d, err := h.live(r, name)
	if err != nil {
		return err
	}
	h.renderFragment(w, r, "connector", "live", d)
	return nil
}

// passwordKeys are the keys of class whose type is PASSWORD, from the plugin's config definitions (none when they
// cannot be read). Callers also hide keys isSecretKey names, which the definitions do not list.
func (h *Handler) passwordKeys(r *http.Request, class string) map[string]bool {
	out := map[string]bool{}
	defs, err := h.defs(r, class)
	if err != nil {
		return out
	}
	for _, k := range defs {
		if k.Type == "PASSWORD" {
			out[k.Name] = true
		}
	}
	return out
}

// isSecretKey says whether a key outside the definitions (client overrides such as
// source.cluster.sasl.jaas.config) holds a secret: the rule the validate endpoint hides values by.
func isSecretKey(key string) bool { return clientconfig.IsSecret(key) }

func (h *Handler) defs(r *http.Request, class string) ([]configKey, error) {
	if class == "" {
		return nil, errors.New("no connector.class")
	}
	var defs []configKey
	err := h.api.get(r.Context(), "/connector-plugins/"+pathSegment(class)+"/config", &defs)
	return defs, err
}

// action runs one of the connector page's buttons against the API, then shows the page again: with a notice
// when the API accepted it, with the API's message verbatim (and nothing changed) when it did not.
func (h *Handler) action(w http.ResponseWriter, r *http.Request, name string) error {
	if err := r.ParseForm(); err != nil {
		return &apiError{Status: http.StatusBadRequest, Message: err.Error()}
	}
	ctx := r.Context()
	var err error
	var notice string
	switch a := r.PostForm.Get("action"); a {
	case "pause", "resume", "stop":
		err = h.api.do(ctx, http.MethodPut, connectorPath(name, a), nil, nil)
		notice = map[string]string{"pause": "Pause requested.", "resume": "Resume requested.", "stop": "Stop requested."}[a]
	case "restart":
		path := connectorPath(name, "restart") + "?includeTasks=" + boolParam(r.PostForm.Get("includeTasks")) +
			"&onlyFailed=" + boolParam(r.PostForm.Get("onlyFailed"))
		err = h.api.do(ctx, http.MethodPost, path, nil, nil)
		notice = "Restart requested."
	case "restart-task":
		err = h.api.do(ctx, http.MethodPost, connectorPath(name, "tasks", pathSegment(r.PostForm.Get("task")), "restart"), nil, nil)
		notice = "Restart of task " + r.PostForm.Get("task") + " requested."
	case "delete":
		if r.PostForm.Get("confirm") != name {
			err = &apiError{Status: http.StatusBadRequest,
				Message: "Not deleted: type the connector's name exactly to confirm the deletion."}
			break
		}
		if err = h.api.do(ctx, http.MethodDelete, connectorPath(name), nil, nil); err == nil {
			redirect(w, r, Prefix+"/", "Connector "+name+" deleted.")
			return nil
		}
	default:
		err = &apiError{Status: http.StatusBadRequest, Message: "Unknown action " + a}
	}
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			return err
		}
		return h.connectorPage(w, r, name, pageMsg{Error: err.Error(), Status: ae.Status})
	}
	redirect(w, r, connURL(name, ""), notice)
	return nil
}

func boolParam(v string) string {
	if v != "" {
		return "true"
	}
	return "false"
}

// pathSegment escapes one path segment of an API path.
func pathSegment(s string) string {
	return url.PathEscape(s)
}
