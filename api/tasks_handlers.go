package api

import (
	"fmt"
	"net/http"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/store"
)

// setTaskConfigsFrom sets connectors.TaskConfigsHeader for the connector's task set.
func setTaskConfigsFrom(w http.ResponseWriter, c store.Connector, tcs []store.TaskConfig) {
	from := connectors.TaskConfigsCurrent
	for _, tc := range tcs {
		if !connectors.PlannedFrom(tc.Config, c.Config) {
			from = connectors.TaskConfigsPrevious
		}
	}
	w.Header().Set(connectors.TaskConfigsHeader, from)
}

// getTasks is GET /connectors/{connector}/tasks: the current task set with each task's config.
func (s *server) getTasks(w http.ResponseWriter, r *http.Request) error {
	reveal, err := revealSecrets(r)
	if err != nil {
		return err
	}
	c, err := s.existingConnector(r)
	if err != nil {
		return err
	}
	tcs, err := s.store.TaskConfigs(r.Context(), c.Name)
	if err != nil {
		return err
	}
	setTaskConfigsFrom(w, c, tcs)
	out := make([]taskInfo, 0, len(tcs))
	for _, tc := range tcs {
		out = append(out, taskInfo{ID: connectorTaskID{Connector: c.Name, Task: tc.Task}, Config: nonNilMap(shownConfig(tc.Config, reveal))})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getTasksConfig is the deprecated GET /connectors/{connector}/tasks-config, keyed by "<connector>-<task>".
func (s *server) getTasksConfig(w http.ResponseWriter, r *http.Request) error {
	s.log.WarnContext(r.Context(), "The 'GET /connectors/{connector}/tasks-config' endpoint is deprecated and will be removed in the next major release. "+
		"Please use the 'GET /connectors/{connector}/tasks' endpoint instead.")
	reveal, err := revealSecrets(r)
	if err != nil {
		return err
	}
	c, err := s.existingConnector(r)
	if err != nil {
		return err
	}
	tcs, err := s.store.TaskConfigs(r.Context(), c.Name)
	if err != nil {
		return err
	}
	setTaskConfigsFrom(w, c, tcs)
	out := make(map[string]map[string]string, len(tcs))
	for _, tc := range tcs {
		out[fmt.Sprintf("%s-%d", c.Name, tc.Task)] = nonNilMap(shownConfig(tc.Config, reveal))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
