package api

import (
	"errors"
	"net/http"

	"github.com/kmirror/kmirror/store"
)

// stateInfo builds ConnectorStateInfo from stored statuses; tasks come sorted by id from the store.
func stateInfo(name string, conn store.Status, tasks []store.Status, kind connectorKind) connectorStateInfo {
	out := connectorStateInfo{
		Name:      name,
		Connector: connectorState{State: conn.State, WorkerID: conn.WorkerID, Trace: conn.Trace, Version: kind.Version},
		Tasks:     make([]taskState, 0, len(tasks)),
		Type:      kind.Type,
	}
	for _, t := range tasks {
		out.Tasks = append(out.Tasks, taskStateOf(t, kind))
	}
	return out
}

// taskStateOf is a task's TaskState.
func taskStateOf(t store.Status, kind connectorKind) taskState {
	return taskState{ID: t.Task, State: t.State, WorkerID: t.WorkerID, Trace: t.Trace, Version: kind.Version}
}

// getStatus is GET /connectors/{connector}/status. It is 404 both for an unknown connector and for one that
// has not reported a status yet, as in Connect.
func (s *server) getStatus(w http.ResponseWriter, r *http.Request) error {
	name, conn, tasks, err := s.connectorStatus(r)
	if err != nil {
		return err
	}
	kind, err := s.kindOf(r, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, stateInfo(name, conn, tasks, kind))
	return nil
}

// connectorStatus reads the statuses of the connector named in the path: 404 both for an unknown connector
// and for one that has not reported a status yet, as in Connect.
func (s *server) connectorStatus(r *http.Request) (name string, conn store.Status, tasks []store.Status, err error) {
	if name, err = pathParam(r, "connector"); err != nil {
		return "", store.Status{}, nil, err
	}
	conn, tasks, err = s.Store.ConnectorStatus(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return "", store.Status{}, nil, errorf(http.StatusNotFound, "No status found for connector %s", name)
	}
	return name, conn, tasks, err
}

// kindOf is the type and running version of the named connector; type "unknown" and no version if it has just
// been deleted.
func (s *server) kindOf(r *http.Request, name string) (connectorKind, error) {
	c, err := s.Store.GetConnector(r.Context(), name)
	if errors.Is(err, store.ErrNotFound) {
		return connectorKind{Type: "unknown"}, nil
	}
	if err != nil {
		return connectorKind{}, err
	}
	return s.connectorKind(c.Config), nil
}

// getTaskStatus is GET /connectors/{connector}/tasks/{task}/status.
func (s *server) getTaskStatus(w http.ResponseWriter, r *http.Request) error {
	name, task, err := connectorTask(r)
	if err != nil {
		return err
	}
	notFound := errorf(http.StatusNotFound, "No status found for task %s-%d", name, task)
	if task < 0 { // the store keeps the connector's own status under task -1
		return notFound
	}
	st, err := s.Store.TaskStatus(r.Context(), name, task)
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return err
	}
	kind, err := s.kindOf(r, name)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, taskStateOf(st, kind))
	return nil
}
