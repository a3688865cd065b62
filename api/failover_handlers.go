package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/store"
)

// A failover is a kmirror extension (Connect has none): POST /connectors/{c}/failover on a MirrorSourceConnector
// files the operation and answers 202 at once with its state; a worker runs it (package failover) and GET of the
// same path shows its state and, once it ended, its report. It drains, stops and moves groups, which can take
// minutes: no request is held open that long, a client that went away loses nothing, and the report is kept for
// whoever asks afterwards.

// defaultDrainTimeout is how long a failover waits, unless told otherwise, for the source connector to replicate
// what the source held when it began; maxDrainTimeout bounds what a request may ask.
const (
	defaultDrainTimeout = 60 * time.Second
	maxDrainTimeout     = time.Hour
)

// failoverRequest is the body of POST /connectors/{c}/failover and /failback; every field is optional but a
// failback's failover_of.
type failoverRequest struct {
	// FailoverOf names, for a failback, the A→B source connector whose failover it undoes.
	FailoverOf *string `json:"failover_of"`
	// CheckpointConnector names the MirrorCheckpointConnector whose groups move; without it, every one of the
	// source connector's aliases.
	CheckpointConnector *string `json:"checkpoint_connector"`
	// DrainTimeoutMs bounds the wait for the drain; 0 stops the source connector at once.
	DrainTimeoutMs *int64 `json:"drain_timeout_ms"`
}

// failoverBody is a failover or failback operation as the API shows it.
type failoverBody struct {
	ID                  int64           `json:"id"`
	Kind                string          `json:"kind"`
	Connector           string          `json:"connector"`
	FailoverOf          *string         `json:"failover_of,omitempty"`
	CheckpointConnector *string         `json:"checkpoint_connector"`
	DrainTimeoutMs      int64           `json:"drain_timeout_ms"`
	State               string          `json:"state"`
	Phase               *string         `json:"phase"`
	Error               *string         `json:"error"`
	RequestedAt         string          `json:"requested_at"`
	FinishedAt          *string         `json:"finished_at"`
	Report              json.RawMessage `json:"report"`
}

func failoverOf(f store.Failover) failoverBody {
	b := failoverBody{ID: f.ID, Kind: f.Kind, Connector: f.Connector, DrainTimeoutMs: f.DrainTimeout.Milliseconds(), State: f.State,
		RequestedAt: formatTime(f.RequestedAt), Report: f.Report}
	if f.CheckpointConnector != "" {
		b.CheckpointConnector = &f.CheckpointConnector
	}
	if f.FailoverOf != "" {
		b.FailoverOf = &f.FailoverOf
	}
	if f.Phase != "" {
		b.Phase = &f.Phase
	}
	if f.Error != "" {
		b.Error = &f.Error
	}
	if f.FinishedAt != nil {
		t := formatTime(*f.FinishedAt)
		b.FinishedAt = &t
	}
	if b.Report == nil {
		b.Report = json.RawMessage("null")
	}
	return b
}

// startFailover is POST /connectors/{connector}/failover.
func (s *server) startFailover(w http.ResponseWriter, r *http.Request) error {
	return s.startOperation(w, r, store.KindFailover)
}

// startFailback is POST /connectors/{connector}/failback, on the B→A source connector.
func (s *server) startFailback(w http.ResponseWriter, r *http.Request) error {
	return s.startOperation(w, r, store.KindFailback)
}

func (s *server) startOperation(w http.ResponseWriter, r *http.Request, kind string) error {
	body, err := readBody(w, r)
	if err != nil {
		return err
	}
	req, err := decodeFailoverRequest(body)
	if err != nil {
		return err
	}
	drain := defaultDrainTimeout
	if req.DrainTimeoutMs != nil {
		if *req.DrainTimeoutMs < 0 || time.Duration(*req.DrainTimeoutMs)*time.Millisecond > maxDrainTimeout {
			return badBody("drain_timeout_ms must be between 0 and %d, not %d", maxDrainTimeout.Milliseconds(), *req.DrainTimeoutMs)
		}
		drain = time.Duration(*req.DrainTimeoutMs) * time.Millisecond
	}
	c, err := s.sourceConnector(r)
	if err != nil {
		return err
	}
	fr := store.FailoverRequest{Kind: kind, Connector: c.Name, Drain: drain}
	if req.CheckpointConnector != nil {
		fr.Checkpoint = *req.CheckpointConnector
		if err := s.checkClass(r, "checkpoint_connector", fr.Checkpoint, mirrorconfig.CheckpointConnectorClass); err != nil {
			return err
		}
	}
	switch {
	case kind == store.KindFailback && req.FailoverOf == nil:
		return badBody("failover_of: required, the MirrorSourceConnector (A→B) whose failover this failback undoes")
	case kind == store.KindFailback:
		fr.FailoverOf = *req.FailoverOf
		if err := s.checkClass(r, "failover_of", fr.FailoverOf, mirrorconfig.SourceConnectorClass); err != nil {
			return err
		}
		f, err := s.Store.LatestFailover(r.Context(), fr.FailoverOf, store.KindFailover)
		if errors.Is(err, store.ErrNotFound) || err == nil && f.State != store.FailoverSucceeded {
			return badBody("failover_of: connector %s has no succeeded failover to fail back from", fr.FailoverOf)
		}
		if err != nil {
			return err
		}
	case req.FailoverOf != nil:
		return badBody("failover_of: only a failback takes it")
	}
	f, err := s.Store.RequestFailover(r.Context(), fr)
	var field *store.FailoverFieldError
	switch {
	case errors.As(err, &field):
		return badBody("%s: connector not found", field.Field)
	case errors.Is(err, store.ErrNotFound):
		return errorf(http.StatusNotFound, "Connector %s not found", c.Name)
	case errors.Is(err, store.ErrFailoverOpen):
		return errorf(http.StatusConflict, "A failover or failback of connector %s is already under way: see GET /connectors/%s/%s", c.Name, c.Name, kind)
	case err != nil:
		return err
	}
	w.Header().Set("Location", "/connectors/"+c.Name+"/"+kind)
	writeJSON(w, http.StatusAccepted, failoverOf(f))
	return nil
}

// checkClass checks that the connector a field names exists and is of class.
func (s *server) checkClass(r *http.Request, field, name, class string) error {
	c, err := s.Store.GetConnector(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return badBody("%s: connector %s not found", field, name)
	}
	if err != nil {
		return err
	}
	if s.isOf(c, class) != nil {
		return badBody("%s: connector %s is not a %s", field, name, class[strings.LastIndex(class, ".")+1:])
	}
	return nil
}

// decodeFailoverRequest reads a failover or failback body member by member, as the other bodies are read: bad
// UTF-8, a NUL or an unknown key is refused naming the field, and nothing Go-specific reaches the message.
func decodeFailoverRequest(body []byte) (failoverRequest, error) {
	var req failoverRequest
	if len(bytes.TrimSpace(body)) == 0 {
		return req, nil
	}
	dec, err := objectDecoder(body, "a JSON object")
	if err != nil {
		return req, err
	}
	text := func(key string, raw json.RawMessage) (*string, error) {
		if isNull(raw) {
			return nil, nil
		}
		var v string
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, badBody("%q must be a string, not %s", key, jsonKind(raw))
		}
		if strings.ContainsRune(v, 0) {
			return nil, badBody("the value of %q contains a NUL character (\\u0000)", key)
		}
		return &v, nil
	}
	err = eachMember(dec, func(key string, raw json.RawMessage) error {
		var err error
		switch key {
		case "failover_of":
			req.FailoverOf, err = text(key, raw)
		case "checkpoint_connector":
			req.CheckpointConnector, err = text(key, raw)
		case "drain_timeout_ms":
			if isNull(raw) {
				return nil
			}
			var ms int64
			if json.Unmarshal(raw, &ms) != nil {
				return badBody("%q must be a whole number of milliseconds, not %s", key, jsonKind(raw))
			}
			req.DrainTimeoutMs = &ms
		default:
			return badBody(`Unrecognized field %q (known fields: "checkpoint_connector", "drain_timeout_ms", "failover_of")`, key)
		}
		return err
	})
	return req, err
}

// getFailover is GET /connectors/{connector}/failover: the connector's latest failover, running or ended.
func (s *server) getFailover(w http.ResponseWriter, r *http.Request) error {
	return s.getOperation(w, r, store.KindFailover)
}

// getFailback is GET /connectors/{connector}/failback.
func (s *server) getFailback(w http.ResponseWriter, r *http.Request) error {
	return s.getOperation(w, r, store.KindFailback)
}

func (s *server) getOperation(w http.ResponseWriter, r *http.Request, kind string) error {
	c, err := s.sourceConnector(r)
	if err != nil {
		return err
	}
	f, err := s.Store.LatestFailover(r.Context(), c.Name, kind)
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Connector %s has no %s", c.Name, kind)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, failoverOf(f))
	return nil
}

// sourceConnector reads the connector named by the path and checks that it is a MirrorSourceConnector (by its
// stored connector.class, any of the names Connect accepts): a failover and a failback are of a flow's source
// connector.
func (s *server) sourceConnector(r *http.Request) (store.Connector, error) {
	c, err := s.existingConnector(r)
	if err != nil {
		return store.Connector{}, err
	}
	if err := s.isOf(c, mirrorconfig.SourceConnectorClass); err != nil {
		return store.Connector{}, errorf(http.StatusNotFound, "Connector %s %s; a failover is of the source connector of a flow", c.Name, err)
	}
	return c, nil
}

// isOf says, as an error, that c is not of class; nil when it is.
func (s *server) isOf(c store.Connector, class string) error {
	have := c.Config[connectorClassKey]
	if p, ok := s.plugins.lookup(have); !ok || p.Class != class {
		return fmt.Errorf("is not a %s (connector.class is %s)", class[strings.LastIndex(class, ".")+1:], have)
	}
	return nil
}
