package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/kmirror/kmirror/store"
)

// restartConnector is POST /connectors/{connector}/restart[?includeTasks=&onlyFailed=]. Without flags only the
// connector instance restarts and the answer is 204. With either flag the answer is 202 with the restart plan:
// the current statuses, with RESTARTING for every instance the request will restart.
func (s *server) restartConnector(w http.ResponseWriter, r *http.Request) error {
	name, err := pathParam(r, "connector")
	if err != nil {
		return err
	}
	q := r.URL.Query()
	// Jersey reads these Boolean parameters with Boolean.valueOf: only "true", in any case, is true.
	includeTasks := strings.EqualFold(q.Get("includeTasks"), "true")
	onlyFailed := strings.EqualFold(q.Get("onlyFailed"), "true")
	unknown := errorf(http.StatusNotFound, "Unknown connector: %s", name)
	req := store.RestartRequest{Connector: name, IncludeTasks: includeTasks, OnlyFailed: onlyFailed}

	if !includeTasks && !onlyFailed {
		return noContent(w, s.Store.RequestRestart(r.Context(), req), unknown)
	}

	// The plan is computed from the statuses before the request is queued, so a request Connect would answer
	// with 404 leaves no trace.
	conn, tasks, err := s.Store.ConnectorStatus(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		if _, err := s.Store.GetConnector(r.Context(), name); errors.Is(err, store.ErrNotFound) {
			return unknown
		} else if err != nil {
			return err
		}
		return errorf(http.StatusNotFound, "Status for connector %s not found", name)
	}
	if err != nil {
		return err
	}
	kind, err := s.kindOf(r, name)
	if err != nil {
		return err
	}
	if err := s.Store.RequestRestart(r.Context(), req); errors.Is(err, store.ErrNotFound) {
		return unknown
	} else if err != nil {
		return err
	}
	plan := stateInfo(name, conn, tasks, kind)
	if !onlyFailed || conn.State == store.StateFailed {
		plan.Connector.State = store.StateRestarting
	}
	for i, t := range tasks {
		if includeTasks && (!onlyFailed || t.State == store.StateFailed) {
			plan.Tasks[i].State = store.StateRestarting
		}
	}
	writeJSON(w, http.StatusAccepted, plan)
	return nil
}

// restartTask is POST /connectors/{connector}/tasks/{task}/restart: 204 once the request is queued.
func (s *server) restartTask(w http.ResponseWriter, r *http.Request) error {
	name, task, err := connectorTask(r)
	if err != nil {
		return err
	}
	tcs, err := s.Store.TaskConfigs(r.Context(), name)
	if err != nil {
		return err
	}
	known := false
	for _, tc := range tcs {
		known = known || tc.Task == task
	}
	if !known {
		if _, err := s.Store.GetConnector(r.Context(), name); errors.Is(err, store.ErrNotFound) {
			return errorf(http.StatusNotFound, "Unknown connector: %s", name)
		} else if err != nil {
			return err
		}
		return errorf(http.StatusNotFound, "Unknown task: %s-%d", name, task)
	}
	return noContent(w, s.Store.RequestRestart(r.Context(), store.RestartRequest{Connector: name, Task: &task}),
		errorf(http.StatusNotFound, "Unknown connector: %s", name))
}
