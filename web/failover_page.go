package web

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// failoverOp is GET /connectors/{c}/failover as the page shows it.
type failoverOp struct {
	ID                  int64           `json:"id"`
	FailoverOf          *string         `json:"failover_of"`
	CheckpointConnector *string         `json:"checkpoint_connector"`
	DrainTimeoutMs      int64           `json:"drain_timeout_ms"`
	State               string          `json:"state"`
	Phase               *string         `json:"phase"`
	Error               *string         `json:"error"`
	RequestedAt         string          `json:"requested_at"`
	FinishedAt          *string         `json:"finished_at"`
	Report              *failoverReport `json:"report"`
}

type failoverReport struct {
	CheckpointConnectors []string `json:"checkpoint_connectors"`
	SourceReachable      bool     `json:"source_reachable"`
	Drained              bool     `json:"drained"`
	SourceStopped        bool     `json:"source_stopped"`
	StoppedAt            string   `json:"stopped_at"`
	Partitions           []struct {
		SourceTopic   string `json:"source_topic"`
		Partition     int    `json:"partition"`
		TargetTopic   string `json:"target_topic"`
		ReplicatedTo  int64  `json:"replicated_to"`
		SourceEnd     *int64 `json:"source_end"`
		EndBasis      string `json:"end_basis"`
		NotReplicated *struct {
			From int64 `json:"from"`
			To   int64 `json:"to"`
		} `json:"not_replicated"`
	} `json:"partitions"`
	NotReplicatedOffsets int64                  `json:"not_replicated_offsets"`
	TargetEnds           []topicPartitionOffset `json:"target_ends"`
	StartedFrom          []topicPartitionOffset `json:"started_from"`
	Groups               []struct {
		Group      string `json:"group"`
		Action     string `json:"action"`
		Error      string `json:"error"`
		Partitions []struct {
			SourceTopic  string `json:"source_topic"`
			Partition    int    `json:"partition"`
			SourceOffset int64  `json:"source_offset"`
			PositionFrom string `json:"position_from"`
			TargetTopic  string `json:"target_topic"`
			TargetOffset *int64 `json:"target_offset"`
			Exact        bool   `json:"exact"`
			Committed    bool   `json:"committed"`
		} `json:"partitions"`
	} `json:"groups"`
}

type topicPartitionOffset struct {
	Topic     string `json:"topic"`
	Partition int    `json:"partition"`
	Offset    int64  `json:"offset"`
}

type failoverData struct {
	operationData
	// Partitions is where replication stands now: what a failover would wait for, or list as not replicated.
	Partitions *partitions
	PartErr    string
	Lag        int64 // records A holds that B has not, over the partitions, as last published
	// Failbacks are the source connectors of the opposite flow: a failback of this failover is filed on one.
	Failbacks []string
}

// failoverPage shows what a failover of the source connector would do (GET), files one (POST, after the
// user typed the connector's name) and shows the latest one with its report.
func (h *Handler) failoverPage(w http.ResponseWriter, r *http.Request, name string, fragment bool) error {
	ctx := r.Context()
	op, done, err := h.operationRequest(w, r, name, "failover", fragment, h.startFailover)
	if done || err != nil {
		return err
	}
	d := failoverData{operationData: op}
	var p partitions
	if err := h.api.get(ctx, connectorPath(name, "partitions"), &p); err != nil {
		d.PartErr = err.Error()
	} else {
		d.Partitions = &p
		for _, row := range p.ByPartition {
			if row.LagRecords != nil {
				d.Lag += *row.LagRecords
			}
		}
	}
	var all map[string]expanded
	if err := h.api.get(ctx, "/connectors?expand=info", &all); err != nil {
		return err
	}
	if me, ok := all[name]; ok {
		src, tgt := flowAliases(me.Info.Config)
		d.Failbacks = flowConnectors(all, mirrorconfig.SourceConnectorClass, tgt, src)
	}
	h.render(w, r, d.Msg.httpStatus(), "failover", d)
	return nil
}

// startFailover files the failover the form asks for.
func (h *Handler) startFailover(r *http.Request, name string) error {
	return h.startOperation(r, name, "failover", map[string]any{})
}

// startOperation files the failover or failback (kind) the form asks for with body and the form's optional
// fields; the typed name must be the connector's.
func (h *Handler) startOperation(r *http.Request, name, kind string, body map[string]any) error {
	if r.PostForm.Get("confirm") != name {
		return &apiError{Status: http.StatusBadRequest, Message: "Type the connector's name to confirm the " + kind}
	}
	if ck := strings.TrimSpace(r.PostForm.Get("checkpoint_connector")); ck != "" {
		body["checkpoint_connector"] = ck
	}
	if s := strings.TrimSpace(r.PostForm.Get("drain_timeout_s")); s != "" {
		secs, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return &apiError{Status: http.StatusBadRequest, Message: "Drain timeout: a whole number of seconds, not " + strconv.Quote(s)}
		}
		body["drain_timeout_ms"] = secs * 1000
	}
	return h.api.do(r.Context(), http.MethodPost, connectorPath(name, kind), body, nil)
}

// afterWrite ends a form's post: once the write succeeded it redirects to the page to, with notice (done); an
// API refusal becomes msg's error, for the page to show again with what was typed; any other error is returned.
func afterWrite(w http.ResponseWriter, r *http.Request, err error, to, notice string, msg *pageMsg) (done bool, _ error) {
	if err == nil {
		redirect(w, r, to, notice)
		return true, nil
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		return false, err
	}
	msg.Error, msg.Status = err.Error(), ae.Status
	return false, nil
}
