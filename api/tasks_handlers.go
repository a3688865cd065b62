package api

import (
	"fmt"
	"net/http"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/store"
)

// shownTaskConfigs reads the task set of the connector the path names, with whether its secrets are to be
// shown, and sets connectors.TaskConfigsHeader for it.
func (s *server) shownTaskConfigs(w http.ResponseWriter, r *http.Request) (store.Connector, []store.TaskConfig, bool, error) {
	c, reveal, err := s.shownConnector(r)
	if err != nil {
		return store.Connector{}, nil, false, err
	}
	tcs, err := s.Store.TaskConfigs(r.Context(), c.Name)
	if err != nil {
		return store.Connector{}, nil, false, err
	}
	from := connectors.TaskConfigsCurrent
	for _, tc := range tcs {
		if !connectors.PlannedFrom(tc.Config, c.Config) {
			from = connectors.TaskConfigsPrevious
		}
	}
	w.Header().Set(connectors.TaskConfigsHeader, from)
	return c, tcs, reveal, nil
}

// getTasks is GET /connectors/{connector}/tasks: the current task set with each task's config.
func (s *server) getTasks(w http.ResponseWriter, r *http.Request) error {
	c, tcs, reveal, err := s.shownTaskConfigs(w, r)
	if err != nil {
		return err
	}
	out := make([]taskInfo, 0, len(tcs))
	for _, tc := range tcs {
		out = append(out, taskInfo{ID: connectorTaskID{Connector: c.Name, Task: tc.Task}, Config: nonNilMap(shownConfig(tc.Config, reveal))})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getTasksConfig is the deprecated GET /connectors/{connector}/tasks-config, keyed by "<connector>-<task>".
func (s *server) getTasksConfig(w http.ResponseWriter, r *http.Request) error {
	s.Logger.WarnContext(r.Context(), "The 'GET /connectors/{connector}/tasks-config' endpoint is deprecated and will be removed in the next major release. "+
		"Please use the 'GET /connectors/{connector}/tasks' endpoint instead.")
	c, tcs, reveal, err := s.shownTaskConfigs(w, r)
	if err != nil {
		return err
	}
	out := make(map[string]map[string]string, len(tcs))
	for _, tc := range tcs {
		out[fmt.Sprintf("%s-%d", c.Name, tc.Task)] = nonNilMap(shownConfig(tc.Config, reveal))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
