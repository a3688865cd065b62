package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/kmirror/kmirror/store"
)

// decodeBody reads the request body (readBody's limits) and decodes it with decode.
func decodeBody[T any](w http.ResponseWriter, r *http.Request, decode func([]byte) (T, error)) (T, error) {
	body, err := readBody(w, r)
	if err != nil {
		var zero T
		return zero, err
	}
	return decode(body)
}

// namedProps is the path parameter param and the body's properties, the two things every config write reads
// first; the path is checked before the body is read.
func namedProps(w http.ResponseWriter, r *http.Request, param string) (string, *props, error) {
	name, err := pathParam(r, param)
	if err != nil {
		return "", nil, err
	}
	p, err := decodeBody(w, r, decodeProps)
	if err != nil {
		return "", nil, err
	}
	return name, p, nil
}

// connectorTask is the connector and task the path names.
func connectorTask(r *http.Request) (string, int, error) {
	name, err := pathParam(r, "connector")
	if err != nil {
		return "", 0, err
	}
	task, err := taskParam(r)
	if err != nil {
		return "", 0, err
	}
	return name, task, nil
}

// shownConnector is the connector the path names and whether the request asks to see its secrets (checked
// first, as Connect reads its query parameters before the herder).
func (s *server) shownConnector(r *http.Request) (store.Connector, bool, error) {
	reveal, err := revealSecrets(r)
	if err != nil {
		return store.Connector{}, false, err
	}
	c, err := s.existingConnector(r)
	if err != nil {
		return store.Connector{}, false, err
	}
	return c, reveal, nil
}

// connectorOfClass reads the connector named by the path and checks that its stored connector.class (any of
// the names Connect accepts) is class: only that connector does what the endpoint shows (does, e.g.
// "replicates partitions").
func (s *server) connectorOfClass(r *http.Request, class, does string) (store.Connector, error) {
	c, err := s.existingConnector(r)
	if err != nil {
		return store.Connector{}, err
	}
	stored := c.Config[connectorClassKey]
	if p, ok := s.plugins.lookup(stored); !ok || p.Class != class {
		short := class[strings.LastIndexByte(class, '.')+1:]
		return store.Connector{}, errorf(http.StatusNotFound,
			"Connector %s is not a %s (connector.class is %s); only a %s %s", c.Name, short, stored, short, does)
	}
	return c, nil
}

// writeConnectorInfo answers with the connector's info (GET /connectors/{connector}'s body), secrets hidden
// unless reveal.
func (s *server) writeConnectorInfo(w http.ResponseWriter, r *http.Request, c store.Connector, reveal bool) error {
	info, err := s.connectorInfo(r.Context(), c, reveal)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}

// noContent answers a write's outcome: 204 when it succeeded, notFound when the store found nothing to write
// to, else its error.
func noContent(w http.ResponseWriter, err error, notFound error) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// writeCreated answers 201 with the Location of the connector just created and its info: no tasks yet.
func (s *server) writeCreated(w http.ResponseWriter, r *http.Request, c store.Connector) {
	w.Header().Set("Location", locationOf(r, c.Name))
	writeJSON(w, http.StatusCreated, connectorInfo{Name: c.Name, Config: shownConfig(c.Config, false), Tasks: []connectorTaskID{},
		Type: s.connectorType(c.Config)})
}
