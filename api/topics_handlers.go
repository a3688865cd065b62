package api

import (
	"errors"
	"net/http"

	"github.com/kmirror/kmirror/store"
)

// getTopics is GET /connectors/{connector}/topics. Like Connect it does not check that the connector exists:
// an unknown one has no topics.
func (s *server) getTopics(w http.ResponseWriter, r *http.Request) error {
	name, err := pathParam(r, "connector")
	if err != nil {
		return err
	}
	topics, err := s.Store.ConnectorTopics(r.Context(), name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]activeTopics{name: {Topics: nonNil(topics)}})
	return nil
}

// resetTopics is PUT /connectors/{connector}/topics/reset: 202 even for an unknown connector, as in Connect.
func (s *server) resetTopics(w http.ResponseWriter, r *http.Request) error {
	name, err := pathParam(r, "connector")
	if err != nil {
		return err
	}
	if err := s.Store.ResetConnectorTopics(r.Context(), name); err != nil && !errors.Is(err, store.ErrNotFound) {
		return err
	}
	w.WriteHeader(http.StatusAccepted)
	return nil
}
