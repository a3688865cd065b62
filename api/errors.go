package api

import (
	"errors"
	"fmt"
	"net/http"
)

// httpError is a failure the API reports to the client: an HTTP status and the message that goes into Connect's
// error body {"error_code":status,"message":message}. Handlers return it; anything else becomes a 500.
type httpError struct {
	Status  int
	Message string
}

func (e *httpError) Error() string { return fmt.Sprintf("%d %s", e.Status, e.Message) }

func errorf(status int, format string, args ...any) *httpError {
	return &httpError{Status: status, Message: fmt.Sprintf(format, args...)}
}

// The bodies Jersey produces for requests that never reach a resource method, mapped to ErrorMessage by
// Connect's ConnectExceptionMapper.
var (
	errNotFound         = &httpError{Status: http.StatusNotFound, Message: "HTTP 404 Not Found"}
	errMethodNotAllowed = &httpError{Status: http.StatusMethodNotAllowed, Message: "HTTP 405 Method Not Allowed"}
	errNotAcceptable    = &httpError{Status: http.StatusNotAcceptable, Message: "HTTP 406 Not Acceptable"}
	errUnsupportedMedia = &httpError{Status: http.StatusUnsupportedMediaType, Message: "HTTP 415 Unsupported Media Type"}
)

// errorBody is Connect's ErrorMessage entity.
type errorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// writeError renders err as Connect's error body. Errors that are not an *httpError are internal failures: they
// are logged and reported as 500 with their text, as Connect reports an unexpected exception's message.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var apiErr *httpError
	if !errors.As(err, &apiErr) {
		s.log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.EscapedPath(), "err", err)
		apiErr = &httpError{Status: http.StatusInternalServerError, Message: err.Error()}
	}
	writeJSON(w, apiErr.Status, errorBody{ErrorCode: apiErr.Status, Message: apiErr.Message})
}
