package api

import (
	"net/http"
	"regexp"
	"slices"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	"github.com/kmirror/kmirror/store"
)

// handlerFunc is an endpoint: it writes a success response or returns the error to report.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// Route is one method and chi pattern the API serves.
type Route struct {
	Method  string
	Pattern string
}

// Routes lists every route of the API, in the router's order.
func Routes() []Route {
	var routes []Route
	s := &server{}
	_ = chi.Walk(s.routes(), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, Route{Method: method, Pattern: pattern})
		return nil
	})
	return routes
}

// routes is the route table: every endpoint of Connect's REST API except the worker-to-worker ones, plus the
// OpenAPI document.
func (s *server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(escapedRoutePath, middleware.GetHead)
	r.NotFound(s.notFound)
	r.MethodNotAllowed(s.methodNotAllowed)

	// RootResource consumes anything; the Connect resources only JSON.
	root := s.endpoint(false)
	connect := s.endpoint(true)

	r.Get("/", root(s.serverInfo))
	r.Get("/health", root(s.healthCheck))
	r.Get("/openapi.json", root(s.openAPI))

	r.Get("/connectors", connect(s.listConnectors))
	r.Post("/connectors", connect(s.createConnector))
	r.Get("/connectors/{connector}", connect(s.getConnector))
	r.Delete("/connectors/{connector}", connect(s.deleteConnector))
	r.Get("/connectors/{connector}/config", connect(s.getConnectorConfig))
	r.Put("/connectors/{connector}/config", connect(s.putConnectorConfig))
	r.Patch("/connectors/{connector}/config", connect(s.patchConnectorConfig))
	r.Get("/connectors/{connector}/status", connect(s.getStatus))
	r.Get("/connectors/{connector}/notices", connect(s.getNotices))
	r.Get("/connectors/{connector}/groups", connect(s.listGroups))
	r.Get("/connectors/{connector}/groups/{group}/offsets", connect(s.getGroupOffsets))
	r.Get("/connectors/{connector}/partitions", connect(s.getPartitions))
	r.Post("/connectors/{connector}/failover", connect(s.startFailover))
	r.Get("/connectors/{connector}/failover", connect(s.getFailover))
	r.Post("/connectors/{connector}/failback", connect(s.startFailback))
	r.Get("/connectors/{connector}/failback", connect(s.getFailback))
	r.Post("/connectors/{connector}/restart", connect(s.restartConnector))
	r.Put("/connectors/{connector}/pause", connect(s.setTargetState(store.TargetPaused, http.StatusAccepted)))
	r.Put("/connectors/{connector}/resume", connect(s.setTargetState(store.TargetStarted, http.StatusAccepted)))
	r.Put("/connectors/{connector}/stop", connect(s.setTargetState(store.TargetStopped, http.StatusNoContent)))
	r.Get("/connectors/{connector}/tasks", connect(s.getTasks))
	r.Get("/connectors/{connector}/tasks-config", connect(s.getTasksConfig))
	r.Get("/connectors/{connector}/tasks/{task}/status", connect(s.getTaskStatus))
	r.Post("/connectors/{connector}/tasks/{task}/restart", connect(s.restartTask))
	r.Get("/connectors/{connector}/topics", connect(s.getTopics))
	r.Put("/connectors/{connector}/topics/reset", connect(s.resetTopics))
	r.Get("/connectors/{connector}/offsets", connect(s.getOffsets))
	r.Patch("/connectors/{connector}/offsets", connect(s.alterOffsets))
	r.Delete("/connectors/{connector}/offsets", connect(s.resetOffsets))

	r.Get("/connector-plugins", connect(s.listPlugins))
	r.Get("/connector-plugins/{plugin}/config", connect(s.pluginConfig))
	r.Put("/connector-plugins/{plugin}/config/validate", connect(s.validatePlugin))

	r.Get("/workers", connect(s.listWorkers))

	r.Get("/admin/loggers", connect(s.listLoggers))
	r.Get("/admin/loggers/{logger}", connect(s.getLogger))
	r.Put("/admin/loggers/{logger}", connect(s.setLogger))
	return r
}

// endpoint adapts handlerFuncs to http.Handler, checking content negotiation first as Jersey does once it has
// matched a resource method: 415 for a body that is not JSON (when consumes is set), then 406.
func (s *server) endpoint(consumes bool) func(handlerFunc) http.HandlerFunc {
	return func(h handlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if consumes {
				if err := consumesJSON(r); err != nil {
					s.writeError(w, r, err)
					return
				}
			}
			if err := producesJSON(r); err != nil {
				s.writeError(w, r, err)
				return
			}
			if err := h(w, r); err != nil {
				s.writeError(w, r, err)
			}
		}
	}
}

func (s *server) notFound(w http.ResponseWriter, r *http.Request) {
	s.writeError(w, r, errNotFound)
}

// internalTaskConfigs is the path of Connect's worker-to-worker POST /connectors/{c}/tasks. kmirror has no such
// endpoint; it answers 404 there rather than the 405 the GET route on the same path would give.
var internalTaskConfigs = regexp.MustCompile(`^/connectors/[^/]+/tasks$`)

// methodNotAllowed answers 405 with an Allow header listing the methods the path does take.
func (s *server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	path := chi.RouteContext(r.Context()).RoutePath
	if r.Method == http.MethodPost && internalTaskConfigs.MatchString(path) {
		s.writeError(w, r, errNotFound)
		return
	}
	var allowed []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if s.router.Match(chi.NewRouteContext(), m, path) {
			allowed = append(allowed, m)
		}
	}
	if len(allowed) == 0 { // a method chi does not know, on a path that does not exist
		s.writeError(w, r, errNotFound)
		return
	}
	if slices.Contains(allowed, http.MethodGet) {
		allowed = append(allowed, http.MethodHead)
	}
	for _, m := range allowed {
		w.Header().Add("Allow", m)
	}
	s.writeError(w, r, errMethodNotAllowed)
}
