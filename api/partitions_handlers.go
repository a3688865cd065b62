package api

import (
	"errors"
	"net/http"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/parallelism"
	"github.com/kmirror/kmirror/store"
)

// getPartitions is GET /connectors/{connector}/partitions, a kmirror extension: where each source partition of
// a MirrorSourceConnector stands and what that says about its parallelism (package parallelism).
func (s *server) getPartitions(w http.ResponseWriter, r *http.Request) error {
	c, err := s.mirrorSourceConnector(r)
	if err != nil {
		return err
	}
	facts, err := parallelism.Gather(r.Context(), s.Store, c)
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		return errorf(http.StatusNotFound, "Connector %s not found", c.Name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, facts.Build())
	return nil
}

// mirrorSourceConnector reads the connector named by the path, which must be a MirrorSourceConnector: only
// that connector replicates partitions.
func (s *server) mirrorSourceConnector(r *http.Request) (store.Connector, error) {
	return s.connectorOfClass(r, mirrorconfig.SourceConnectorClass, "replicates partitions")
}
