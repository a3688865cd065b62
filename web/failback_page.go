package web

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// failbackCandidate is a connector of the opposite flow (A→B, for this B→A one) whose failover a failback can
// undo, with the positions a failback would start from.
type failbackCandidate struct {
	Connector string
	// FinishedAt is when its failover ended; StartFrom the target's ends it recorded then.
	FinishedAt string
	StartFrom  []topicPartitionOffset
}

// failbackGroups are the groups a checkpoint connector of this flow follows: those a failback moves.
type failbackGroups struct {
	Connector string
	Groups    []group
	Error     string
}

type failbackData struct {
	operationData
	// SourceAlias and TargetAlias are this connector's (B and A).
	SourceAlias, TargetAlias string
	Candidates               []failbackCandidate
	Checkpoints              []failbackGroups
}

// failbackPage shows what a failback of the B→A source connector would do (GET): the A→B connectors whose
// failover it can undo, the positions it would start copying B from, the groups it would move; files one
// (POST, after the user typed the connector's name) and shows the latest one with its report.
func (h *Handler) failbackPage(w http.ResponseWriter, r *http.Request, name string, fragment bool) error {
	ctx := r.Context()
	op, done, err := h.operationRequest(w, r, name, "failback", fragment, h.startFailback)
	if done || err != nil {
		return err
	}
	d := failbackData{operationData: op}
	if err := h.failbackPlan(ctx, &d); err != nil {
		return err
	}
	h.render(w, r, d.Msg.httpStatus(), "failback", d)
	return nil
}

// operationData is what the failover and failback pages show of every operation: the connector's latest one of
// the page's kind, and the message of the request.
type operationData struct {
	Title string
	Name  string
	Kind  string // failover or failback
	Op    *failoverOp
	Msg   pageMsg
}

// operationRequest is what the failover and failback pages (kind) do with a request before they gather what
// they show: a POST files the operation through start (after the user typed the connector's name) and
// redirects, or leaves the refusal in the message; a GET takes the notice a redirect carried. It returns the
// page's operationData, and done when the response is written already: a poll of the fragment (opState) gets
// the latest operation alone.
func (h *Handler) operationRequest(w http.ResponseWriter, r *http.Request, name, kind string, fragment bool,
	start func(*http.Request, string) error) (d operationData, done bool, err error) {
	titled := strings.ToUpper(kind[:1]) + kind[1:]
	d = operationData{Title: titled + " of " + name, Name: name, Kind: kind}
	if r.Method == http.MethodPost && !fragment {
		if err := r.ParseForm(); err != nil {
			return d, true, &apiError{Status: http.StatusBadRequest, Message: err.Error()}
		}
		filed := titled + " filed: it runs on a worker; this page shows its progress and report."
		if done, err := afterWrite(w, r, start(r, name), connURL(name, kind), filed, &d.Msg); done || err != nil {
			return d, true, err
		}
	} else if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return d, true, errMethod
	} else {
		d.Msg.Notice = r.URL.Query().Get("notice")
	}
	if d.Op, err = h.latestOperation(r.Context(), name, kind); err != nil {
		return d, true, err
	}
	if fragment {
		h.renderFragment(w, r, kind, "opState", d)
		return d, true, nil
	}
	return d, false, nil
}

// latestOperation is the connector's latest failover or failback (kind), nil when it has none.
func (h *Handler) latestOperation(ctx context.Context, name, kind string) (*failoverOp, error) {
	var op failoverOp
	err := h.api.get(ctx, connectorPath(name, kind), &op)
	var ae *apiError
	switch {
	case err == nil:
		return &op, nil
	case errors.As(err, &ae) && ae.Status == http.StatusNotFound && strings.HasSuffix(ae.Message, "has no "+kind):
		return nil, nil
	default:
		return nil, err
	}
}

// failbackPlan finds the source connectors of the opposite flow with a succeeded failover, and the groups the
// checkpoint connectors of this flow follow.
func (h *Handler) failbackPlan(ctx context.Context, d *failbackData) error {
	var all map[string]expanded
	if err := h.api.get(ctx, "/connectors?expand=info", &all); err != nil {
		return err
	}
	me, ok := all[d.Name]
	if !ok {
		return &apiError{Status: http.StatusNotFound, Message: "Connector " + d.Name + " not found"}
	}
	d.SourceAlias, d.TargetAlias = flowAliases(me.Info.Config)
	// The failover recorded every topic of B's own; the failback starts those this connector replicates.
	topics, err := mirror.NewTopicFilter(me.Info.Config)
	if err != nil {
		return &apiError{Status: http.StatusBadRequest, Message: "Connector " + d.Name + ": " + err.Error()}
	}
	for _, n := range flowConnectors(all, mirrorconfig.SourceConnectorClass, d.TargetAlias, d.SourceAlias) {
		op, err := h.latestOperation(ctx, n, "failover")
		if err != nil || op == nil || op.State != "succeeded" || op.Report == nil {
			continue
		}
		c := failbackCandidate{Connector: n, FinishedAt: optString(op.FinishedAt)}
		for _, e := range op.Report.TargetEnds {
			if topics.Accepts(e.Topic) {
				c.StartFrom = append(c.StartFrom, e)
			}
		}
		d.Candidates = append(d.Candidates, c)
	}
	for _, n := range flowConnectors(all, mirrorconfig.CheckpointConnectorClass, d.SourceAlias, d.TargetAlias) {
		fg := failbackGroups{Connector: n}
		var body struct {
			Groups []group `json:"groups"`
		}
		if err := h.api.get(ctx, connectorPath(n, "groups"), &body); err != nil {
			fg.Error = err.Error()
		}
		fg.Groups = body.Groups
		d.Checkpoints = append(d.Checkpoints, fg)
	}
	return nil
}

// flowAliases are a connector's source and target cluster aliases.
func flowAliases(config map[string]string) (source, target string) {
	return config[mirrorconfig.SourceClusterAliasConfig], config[mirrorconfig.TargetClusterAliasConfig]
}

// flowConnectors names, sorted, the connectors of class (mirrorconfig's canonical name) from source to target.
func flowConnectors(all map[string]expanded, class, source, target string) []string {
	var out []string
	for n, e := range all {
		p, ok := mirrorconfig.LookupPlugin(e.Info.Config[mirrorconfig.ConnectorClassConfig])
		if s, t := flowAliases(e.Info.Config); ok && p.Class == class && s == source && t == target {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

func optString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// startFailback files the failback the form asks for, of the failover it names.
func (h *Handler) startFailback(r *http.Request, name string) error {
	return h.startOperation(r, name, "failback", map[string]any{"failover_of": strings.TrimSpace(r.PostForm.Get("failover_of"))})
}
