package api

import (
	"context"
	"errors"
	"maps"
	"net/http"
	"slices"
	"time"

	"github.com/kmirror/kmirror/store"
)

// listConnectors is GET /connectors: the names, or with ?expand=status and/or ?expand=info an object keyed by
// name holding the requested expansions. A connector with no status yet is left out when status is asked for
// (Connect's herder throws NotFound for it); unknown expansions are ignored.
func (s *server) listConnectors(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	reveal, err := revealSecrets(r)
	if err != nil {
		return err
	}
	expands, expand := r.URL.Query()["expand"]
	if !expand {
		names, err := s.Store.ListConnectorNames(ctx)
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, nonNil(names))
		return nil
	}
	conns, err := s.Store.ListConnectors(ctx)
	if err != nil {
		return err
	}
	var statuses map[string][]store.Status
	if slices.Contains(expands, "status") {
		if statuses, err = s.Store.AllStatuses(ctx); err != nil {
			return err
		}
	}
	out := make(map[string]map[string]any, len(conns))
	for _, c := range conns {
		entry, ok, err := s.expandConnector(ctx, c, expands, statuses[c.Name], reveal)
		if err != nil {
			return err
		}
		if ok {
			out[c.Name] = entry
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func (s *server) expandConnector(ctx context.Context, c store.Connector, expands []string, statuses []store.Status, reveal bool) (map[string]any, bool, error) {
	entry := map[string]any{}
	for _, e := range expands {
		switch e {
		case "status":
			if len(statuses) == 0 || statuses[0].Task != store.ConnectorUnit {
				return nil, false, nil
			}
			entry["status"] = stateInfo(c.Name, statuses[0], statuses[1:], s.connectorKind(c.Config))
		case "info":
			info, err := s.connectorInfo(ctx, c, reveal)
			if err != nil {
				return nil, false, err
			}
			entry["info"] = info
		}
	}
	return entry, true, nil
}

// connectorInfo builds ConnectorInfo from a stored connector and its current task set; reveal shows its secrets.
func (s *server) connectorInfo(ctx context.Context, c store.Connector, reveal bool) (connectorInfo, error) {
	tcs, err := s.Store.TaskConfigs(ctx, c.Name)
	if err != nil {
		return connectorInfo{}, err
	}
	tasks := make([]connectorTaskID, 0, len(tcs))
	for _, tc := range tcs {
		tasks = append(tasks, connectorTaskID{Connector: c.Name, Task: tc.Task})
	}
	info := connectorInfo{Name: c.Name, Config: shownConfig(c.Config, reveal), Tasks: tasks, Type: s.connectorType(c.Config),
		DeclaredBy: c.DeclaredBy}
	if t := c.TakenOver; t != nil {
		info.TakenOver = &takenOver{Topic: t.Topic, Partitions: t.Partitions, Groups: t.Groups, At: t.At.UTC().Format(time.RFC3339),
			Message: takeoverMessage(*t)}
	}
	return info, nil
}

// createConnector is POST /connectors. The name is trimmed as Java's String.trim does, config.name must match
// it or is added, the config is validated, and the connector is stored with its initial target state.
func (s *server) createConnector(w http.ResponseWriter, r *http.Request) error {
	req, err := decodeBody(w, r, decodeCreateRequest)
	if err != nil {
		return err
	}
	if req.config == nil {
		// Connect fails on a missing config with a NullPointerException (500 with a null message).
		return badBody(`"config" is missing; expected {"name": ..., "config": {...}}`)
	}
	name := javaTrim(req.name)
	if err := checkAndPutName(name, req.config); err != nil {
		return err
	}
	if _, err := keepStoredSecrets(req.config, nil, name); err != nil {
		return err
	}
	if err := s.validateForWrite(req.config); err != nil {
		return err
	}
	state := store.TargetStarted
	switch req.initialState {
	case "PAUSED":
		state = store.TargetPaused
	case "STOPPED":
		state = store.TargetStopped
	}
	c, err := s.Store.CreateConnector(r.Context(), name, req.config.strings(), state)
	if errors.Is(err, store.ErrAlreadyExists) {
		return errorf(http.StatusConflict, "Connector %s already exists", name)
	}
	if err != nil {
		return err
	}
	s.writeCreated(w, r, c)
	return nil
}

// getConnector is GET /connectors/{connector}.
func (s *server) getConnector(w http.ResponseWriter, r *http.Request) error {
	c, reveal, err := s.shownConnector(r)
	if err != nil {
		return err
	}
	return s.writeConnectorInfo(w, r, c, reveal)
}

// getConnectorConfig is GET /connectors/{connector}/config: the stored map, secrets hidden unless an admin asks
// (revealSecrets).
func (s *server) getConnectorConfig(w http.ResponseWriter, r *http.Request) error {
	c, reveal, err := s.shownConnector(r)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, shownConfig(c.Config, reveal))
	return nil
}

// putConnectorConfig is PUT /connectors/{connector}/config: create (201 with Location, target state STARTED)
// or replace the config (200, target state kept). The path name is not trimmed.
func (s *server) putConnectorConfig(w http.ResponseWriter, r *http.Request) error {
	name, cfg, err := namedProps(w, r, "connector")
	if err != nil {
		return err
	}
	if err := checkAndPutName(name, cfg); err != nil {
		return err
	}
	var c store.Connector
	created := false
	if len(hiddenSecrets(cfg)) > 0 {
		// A config read back with its secrets hidden: replace it under the row lock, with the stored secrets.
		c, err = s.Store.UpdateConnector(r.Context(), name, func(c *store.Connector) error {
			if err := refuseDeclared(c); err != nil {
				return err
			}
			full, err := keepStoredSecrets(cfg, c.Config, name)
			if err != nil {
				return err
			}
			if err := s.validateForWrite(full); err != nil {
				return err
			}
			c.Config = full.strings()
			return nil
		})
		if errors.Is(err, store.ErrNotFound) {
			_, err = keepStoredSecrets(cfg, nil, name)
		}
	} else {
		if err := s.validateForWrite(cfg); err != nil {
			return err
		}
		c, created, err = s.Store.PutConnector(r.Context(), name, cfg.strings())
	}
	if err != nil {
		return err
	}
	if created {
		s.writeCreated(w, r, c)
		return nil
	}
	// Connect answers a replace with the tasks of the config being replaced; new ones come later.
	return s.writeConnectorInfo(w, r, c, false)
}

// patchConnectorConfig is PATCH /connectors/{connector}/config: keys with a null value are removed, others set,
// and the result is validated like a PUT, all under the connector's row lock so concurrent patches compose.
// Like Connect, it does not check config.name against the path.
func (s *server) patchConnectorConfig(w http.ResponseWriter, r *http.Request) error {
	name, patch, err := namedProps(w, r, "connector")
	if err != nil {
		return err
	}
	c, err := s.Store.UpdateConnector(r.Context(), name, func(c *store.Connector) error {
		if err := refuseDeclared(c); err != nil {
			return err
		}
		patch, err := keepStoredSecrets(patch, c.Config, name)
		if err != nil {
			return err
		}
		merged := propsFromMap(c.Config)
		for _, k := range patch.keys {
			if v := patch.values[k]; v != nil {
				merged.set(k, v)
			} else {
				merged.delete(k)
			}
		}
		if err := s.validateForWrite(merged); err != nil {
			return err
		}
		c.Config = merged.strings()
		return nil
	})
	if errors.Is(err, store.ErrNotFound) {
		return errorf(http.StatusNotFound, "Connector %s not found", name)
	}
	if err != nil {
		return err
	}
	return s.writeConnectorInfo(w, r, c, false)
}

// deleteConnector is DELETE /connectors/{connector}.
func (s *server) deleteConnector(w http.ResponseWriter, r *http.Request) error {
	name, err := pathParam(r, "connector")
	if err != nil {
		return err
	}
	return noContent(w, s.Store.DeleteConnector(r.Context(), name), errorf(http.StatusNotFound, "Connector %s not found", name))
}

// setTargetState serves PUT .../pause (202), .../resume (202) and .../stop (204). All three are idempotent.
func (s *server) setTargetState(state store.TargetState, status int) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		name, err := pathParam(r, "connector")
		if err != nil {
			return err
		}
		err = s.Store.SetTargetState(r.Context(), name, state)
		if errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusNotFound, "Unknown connector %s", name)
		}
		if err != nil {
			return err
		}
		w.WriteHeader(status)
		return nil
	}
}

// existingConnector reads the connector named by the path, or 404 "Connector X not found".
func (s *server) existingConnector(r *http.Request) (store.Connector, error) {
	name, err := pathParam(r, "connector")
	if err != nil {
		return store.Connector{}, err
	}
	c, err := s.Store.GetConnector(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return store.Connector{}, errorf(http.StatusNotFound, "Connector %s not found", name)
	}
	return c, err
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func sortedKeys(m map[string]string) []string {
	return slices.Sorted(maps.Keys(m))
}
