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
	facts, err := parallelism.Gather(r.Context(), s.store, c)
	if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
		return errorf(http.StatusNotFound, "Connector %s not found", c.Name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, facts.Build())
	return nil
}

// mirrorSourceConnector reads the connector named by the path and checks that it is a MirrorSourceConnector
// (by its stored connector.class, any of the names Connect accepts): only that connector replicates partitions.
func (s *server) mirrorSourceConnector(r *http.Request) (store.Connector, error) {
	c, err := s.existingConnector(r)
	if err != nil {
		return store.Connector{}, err
	}
	class := c.Config["connector.class"]
	if p, ok := s.plugins.lookup(class); !ok || p.Class != mirrorconfig.SourceConnectorClass {
		return store.Connector{}, errorf(http.StatusNotFound,
			"Connector %s is not a MirrorSourceConnector (connector.class is %s); only a MirrorSourceConnector replicates partitions",
			c.Name, class)
	}
	return c, nil
}
