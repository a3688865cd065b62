package api

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/store"
)

// ConnectVersion is the Kafka Connect version kmirror's API imitates. Clients gate features on the version
// reported by GET / (kcctl needs at least 3.7 for everything), so it must parse as major.minor.patch.
const ConnectVersion = "4.1.1"

// Config wires the API to the rest of the process.
type Config struct {
	// Store holds the desired state the API reads and writes. Required.
	Store *store.Store
	// Info answers GET /. Nil reports ConnectVersion, an empty commit and the store's cluster id.
	Info func(ctx context.Context) (ServerInfo, error)
	// Health answers GET /health. Nil reports healthy whenever the database answers a ping.
	Health func(ctx context.Context) Health
	// Loggers serves /admin/loggers. Nil disables the admin endpoints (404), as Connect does when
	// admin.listeners is set but empty.
	Loggers Loggers
	// Logger receives request failures. Nil discards them.
	Logger *slog.Logger
	// ExactlyOnceSource is the worker's exactly-once source support, which Connect's preflight validation of
	// exactly.once.support depends on. Zero is disabled.
	ExactlyOnceSource mirrorconfig.ExactlyOnceSourceSupport
	// Clients are the rules client settings are validated against (allowed files, config providers): the
	// same the runtime builds clients with. The zero value allows no file and no provider.
	Clients clientconfig.Options
}

// ServerInfo is the body of GET /.
type ServerInfo struct {
	Version   string `json:"version"`
	Commit    string `json:"commit"`
	ClusterID string `json:"kafka_cluster_id"`
}

// Health is the worker's health as GET /health reports it: Code is the HTTP status (200 healthy, 503 starting,
// 500 unhealthy), Status and Message go into Connect's WorkerStatus body.
type Health struct {
	Code    int
	Status  string
	Message string
}

// Loggers is the process's named logger levels (implemented by the server). Level names are Connect's/log4j's:
// TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF.
type Loggers interface {
	// Levels returns every known logger with its effective level, "root" included.
	Levels() map[string]LoggerLevel
	// Level returns the effective level of a known logger, false if the logger is unknown.
	Level(name string) (LoggerLevel, bool)
	// Set sets the level of the logger and its descendants on this worker only and returns the affected
	// logger names, sorted.
	Set(name, level string) ([]string, error)
}

// LoggerLevel is Connect's LoggerLevel entity. LastModified is epoch milliseconds, nil if the level was never
// changed through the API.
type LoggerLevel struct {
	Level        string `json:"level"`
	LastModified *int64 `json:"last_modified"`
}

// server holds what the handlers share; it is built once per New. Its only mutable state is the plugin
// lookup cache and the rate limiter of failure logs.
type server struct {
	Config   // with its defaults filled in
	failures *lograte.Limiter
	plugins  *catalog
	router   chi.Router
	worker   mirrorconfig.Worker // what validation needs to know of this worker
}

// New returns the Connect REST API as an http.Handler meant to be served at the root of a listener. It only
// writes desired state to the store; the runtime reacts to the store's notifications.
func New(cfg Config) http.Handler {
	s := &server{
		Config:   cfg,
		failures: lograte.New(failureLogInterval, lograte.WithMaxKeys(256)),
		plugins:  &catalog{},
		worker:   mirrorconfig.Worker{ExactlyOnceSource: cfg.ExactlyOnceSource},
	}
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Info == nil {
		s.Info = s.defaultInfo
	}
	if s.Health == nil {
		s.Health = s.defaultHealth
	}
	s.router = s.routes()
	return http.HandlerFunc(s.serveHTTP)
}

// serveHTTP routes every request afresh. A routing context left by an enclosing chi router is dropped: this
// router always routes the full escaped path itself (see escapedRoutePath).
func (s *server) serveHTTP(w http.ResponseWriter, r *http.Request) {
	if chi.RouteContext(r.Context()) != nil {
		r = r.WithContext(context.WithValue(r.Context(), chi.RouteCtxKey, (*chi.Context)(nil)))
	}
	s.router.ServeHTTP(w, r)
}

func (s *server) defaultInfo(ctx context.Context) (ServerInfo, error) {
	id, err := s.Store.ClusterID(ctx)
	if err != nil {
		return ServerInfo{}, err
	}
	return ServerInfo{Version: ConnectVersion, ClusterID: id}, nil
}

// The texts of Connect's WorkerStatus (WorkerStatus.java).
const (
	healthyMessage   = "Worker has completed startup and is ready to handle requests."
	unhealthyMessage = "Worker was unable to handle this request and may be unable to handle other requests."
)

func (s *server) defaultHealth(ctx context.Context) Health {
	if err := s.Store.Ping(ctx); err != nil {
		s.failures.Log(ctx, s.Logger, slog.LevelWarn, "health: "+err.Error(), "health check failed", "error", err)
		return UnhealthyDatabase(err)
	}
	return Health{Code: http.StatusOK, Status: "healthy", Message: healthyMessage}
}

// UnhealthyDatabase is the Health of a worker whose database check failed with err: Connect's unhealthy text
// and a short cause. err's own text stays out, since /health is often public to load balancers and pgx's
// connection errors name the database's host, port, user and name; callers log it instead.
func UnhealthyDatabase(err error) Health {
	cause := "Database check failed."
	if store.IsUnavailable(err) {
		cause = "Database unreachable."
	}
	return Health{Code: http.StatusInternalServerError, Status: "unhealthy", Message: unhealthyMessage + " " + cause}
}
