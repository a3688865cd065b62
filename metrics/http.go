package metrics

import (
	"net/http"
	"strconv"
	"time"
)

// HTTPMiddleware counts and times the requests a handler serves: kmirror_http_requests_total{route,method,code}
// and kmirror_http_request_duration_seconds{route}. route names the request's route pattern (such as
// "/connectors/{connector}/status"); it is called once the handler has returned, so it may read what a router
// left in the request's context. It must return a bounded set of values: never the raw path. "" and a nil
// route count as "other". Methods outside HTTP's standard ones count as "other" too.
func (r *Registry) HTTPMiddleware(route func(*http.Request) string) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			start := time.Now()
			rec := &statusRecorder{ResponseWriter: w}
			next.ServeHTTP(rec, req)
			rt := "other"
			if route != nil {
				if s := route(req); s != "" {
					rt = s
				}
			}
			code := rec.status
			if code == 0 {
				code = http.StatusOK
			}
			r.httpRequests.WithLabelValues(rt, methodLabel(req.Method), strconv.Itoa(code)).Inc()
			r.httpDuration.WithLabelValues(rt).Observe(time.Since(start).Seconds())
		})
	}
}

func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete,
		http.MethodOptions, http.MethodConnect, http.MethodTrace:
		return m
	}
	return "other"
}

// statusRecorder remembers the status a handler wrote.
type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	if s.status == 0 {
		s.status = code
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusRecorder) Write(b []byte) (int, error) {
	if s.status == 0 {
		s.status = http.StatusOK
	}
	return s.ResponseWriter.Write(b)
}

// Flush lets streaming handlers (server-sent events) flush through the recorder.
func (s *statusRecorder) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (s *statusRecorder) Unwrap() http.ResponseWriter { return s.ResponseWriter }
