package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/kmirror/kmirror/store"
)

// logLevels are the levels PUT /admin/loggers/{logger} accepts, compared case-insensitively.
var logLevels = []string{"OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE"}

// rootLogger is the root logger's name, which Connect matches case-insensitively.
const rootLogger = "root"

func loggerName(name string) string {
	if strings.EqualFold(name, rootLogger) {
		return rootLogger
	}
	return name
}

// listLoggers is GET /admin/loggers: every logger the worker knows (root, the loggers it created and those a
// PUT created), each with its effective level, keyed (and so sorted) by name, as Connect 4.x lists the loggers
// of its log4j2 context.
func (s *server) listLoggers(w http.ResponseWriter, r *http.Request) error {
	if s.Loggers == nil {
		return errNotFound
	}
	levels := s.Loggers.Levels()
	if levels == nil {
		levels = map[string]LoggerLevel{}
	}
	writeJSON(w, http.StatusOK, levels)
	return nil
}

// loggerParam is the logger the path names; the admin endpoints do not exist (404) without Loggers.
func (s *server) loggerParam(r *http.Request) (string, error) {
	if s.Loggers == nil {
		return "", errNotFound
	}
	return pathParam(r, "logger")
}

// getLogger is GET /admin/loggers/{logger}: the logger's effective level.
func (s *server) getLogger(w http.ResponseWriter, r *http.Request) error {
	name, err := s.loggerParam(r)
	if err != nil {
		return err
	}
	level, ok := s.Loggers.Level(loggerName(name))
	if !ok {
		return errorf(http.StatusNotFound, "Logger %s not found.", name)
	}
	writeJSON(w, http.StatusOK, level)
	return nil
}

// setLogger is PUT /admin/loggers/{logger}[?scope=worker|cluster] with {"level": ...}. Worker scope (the
// default, and what any unrecognized scope means) changes this process and answers the loggers whose level
// changed (creating the named logger if it is unknown, as log4j2 does); cluster scope stores the level for
// every worker to apply and answers 204.
func (s *server) setLogger(w http.ResponseWriter, r *http.Request) error {
	name, err := s.loggerParam(r)
	if err != nil {
		return err
	}
	if len(name) > maxNameBytes {
		return errorf(http.StatusBadRequest, "Logger name is %d bytes long; kmirror accepts names of at most %d bytes", len(name), maxNameBytes)
	}
	req, err := decodeBody(w, r, decodeProps)
	if err != nil {
		return err
	}
	given, ok := req.get("level")
	if !ok {
		return errorf(http.StatusBadRequest, "Desired 'level' parameter was not specified in request.")
	}
	level := strings.ToUpper(given)
	if !slices.Contains(logLevels, level) {
		// Connect answers an invalid level with 404.
		return errorf(http.StatusNotFound, "invalid log level '%s'.", given)
	}
	name = loggerName(name)

	scope := r.URL.Query().Get("scope")
	if strings.EqualFold(scope, "cluster") {
		err := s.Store.SetLoggerLevel(r.Context(), store.LoggerLevel{Logger: name, Level: level, LastModified: time.Now().UnixMilli()})
		if err != nil {
			return err
		}
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if scope != "" && !strings.EqualFold(scope, "worker") {
		s.Logger.WarnContext(r.Context(), "received invalid scope in request to adjust logging level; defaulting to worker", "scope", scope)
	}
	affected, err := s.Loggers.Set(name, level)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, nonNil(affected))
	return nil
}
