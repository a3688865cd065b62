package api

import "net/http"

// serverInfo is GET /.
func (s *server) serverInfo(w http.ResponseWriter, r *http.Request) error {
	info, err := s.Info(r.Context())
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, info)
	return nil
}

// healthCheck is GET /health. Its body is Connect's WorkerStatus whatever the status code, never an error body.
func (s *server) healthCheck(w http.ResponseWriter, r *http.Request) error {
	h := s.Health(r.Context())
	code := h.Code
	if code == 0 {
		code = http.StatusOK
	}
	writeJSON(w, code, workerStatus{Status: h.Status, Message: h.Message})
	return nil
}
