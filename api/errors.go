package api

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/kmirror/kmirror/store"
)

// httpError is a failure the API reports to the client: an HTTP status and the message that goes into Connect's
// error body {"error_code":status,"message":message}. Handlers return it; anything else is an internal failure
// (see internalError).
type httpError struct {
	Status  int
	Message string
	// RetryAfter, when positive, is sent as the Retry-After header.
	RetryAfter time.Duration
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

// errDatabaseUnavailable answers every request that needed the database while it cannot be reached. Pools
// reconnect within a second or two of the database coming back, so a few seconds is a fair time to wait.
var errDatabaseUnavailable = &httpError{
	Status:     http.StatusServiceUnavailable,
	Message:    "kmirror cannot reach its database; try again shortly",
	RetryAfter: 5 * time.Second,
}

// failureLogInterval is how often the same internal failure is logged at most: during an outage every request
// fails the same way, and one line per interval, with the number of repeats, says as much as hundreds.
const failureLogInterval = 10 * time.Second

// databaseUnavailableKey is the one rate-limiting key of every database-unreachable failure, whatever the
// request: they are one failure, and their texts differ only by the operation that met it.
const databaseUnavailableKey = "database unreachable"

// errorBody is Connect's ErrorMessage entity.
type errorBody struct {
	ErrorCode int    `json:"error_code"`
	Message   string `json:"message"`
}

// writeError renders err as Connect's error body.
func (s *server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	var apiErr *httpError
	var declared *store.DeclaredError
	switch {
	case errors.As(err, &apiErr):
	case errors.As(err, &declared):
		apiErr = declaredConflict(declared)
	default:
		apiErr = s.internalError(r, err)
	}
	if apiErr.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(apiErr.RetryAfter.Round(time.Second)/time.Second)))
	}
	writeJSON(w, apiErr.Status, errorBody{ErrorCode: apiErr.Status, Message: apiErr.Message})
}

// internalError logs a failure that is not the client's and returns what the client is told about it. Connect
// answers 500 with the exception's text; kmirror does not, because the texts are the store's: during a database
// outage they carry the database's host, port, user and name, at other times SQL. The client gets 503 while the
// database cannot be reached (the request may well succeed later) and otherwise a 500 that names the request,
// and the log gets the error, at most once per failureLogInterval for identical failures.
func (s *server) internalError(r *http.Request, err error) *httpError {
	ctx := r.Context()
	method, path := r.Method, r.URL.EscapedPath()
	if store.IsUnavailable(err) {
		s.failures.Log(ctx, s.Logger, slog.LevelWarn, databaseUnavailableKey, "request failed",
			"method", method, "path", path, "status", http.StatusServiceUnavailable, "error", err)
		return errDatabaseUnavailable
	}
	s.failures.Log(ctx, s.Logger, slog.LevelError, "internal: "+err.Error(), "request failed",
		"method", method, "path", path, "status", http.StatusInternalServerError, "error", err)
	return &httpError{
		Status:  http.StatusInternalServerError,
		Message: "Internal server error while handling " + method + " " + path + "; see the worker's log",
	}
}

// declaredConflict answers a config write or delete of a connector declared from a file: the file is where it
// changes, and a worker applies the file again when it starts. Its target state and offsets stay the REST API's.
func declaredConflict(d *store.DeclaredError) *httpError {
	return errorf(http.StatusConflict, "Connector %s is declared by %s: change or remove it there (a worker applies the "+
		"file when it starts); pause, resume, stop, restart and offsets work as for any connector", d.Name, d.By)
}

// refuseDeclared is the check of a config change made under the connector's row lock.
func refuseDeclared(c *store.Connector) error {
	if c.DeclaredBy != "" {
		return &store.DeclaredError{Name: c.Name, By: c.DeclaredBy}
	}
	return nil
}
