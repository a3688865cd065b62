package web

import (
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Config wires the dashboard to the REST API.
type Config struct {
	// API is the REST API's handler (paths /connectors, /workers, ...). Required: every page is rendered
	// from its answers.
	API http.Handler
	// Logger receives render failures. Nil discards them.
	Logger *slog.Logger
	// CanWrite tells whether the caller of a request may change anything (a read-only user may not): pages
	// for those who may not show no write controls, which the REST API would refuse anyway. Nil: everyone may.
	CanWrite func(*http.Request) bool
}

// Handler serves the dashboard under Prefix; its links are absolute, so it must be mounted there.
type Handler struct {
	api   client
	log   *slog.Logger
	pages map[string]*template.Template
	// viewPages are the same pages without write controls, for callers that may only read.
	viewPages map[string]*template.Template
	canWrite  func(*http.Request) bool
	files     http.Handler
	// csrf refuses cross-origin form posts: the dashboard's forms change connectors, and unlike the REST API's
	// JSON writes (which a browser sends cross-origin only after a CORS preflight) a form post needs none.
	csrf *http.CrossOriginProtection
}

// Prefix is where the dashboard lives; the API answers everything else.
const Prefix = "/ui"

// New builds the dashboard handler.
func New(cfg Config) (*Handler, error) {
	if cfg.API == nil {
		return nil, errors.New("web: Config.API is required")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	pages, err := parsePages(true)
	if err != nil {
		return nil, err
	}
	viewPages, err := parsePages(false)
	if err != nil {
		return nil, err
	}
	canWrite := cfg.CanWrite
	if canWrite == nil {
		canWrite = func(*http.Request) bool { return true }
	}
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		return nil, fmt.Errorf("web: static files: %w", err)
	}
	return &Handler{api: client{api: cfg.API}, log: log, pages: pages, viewPages: viewPages, canWrite: canWrite,
		files: http.StripPrefix(Prefix+"/static/", http.FileServerFS(static)),
		csrf:  http.NewCrossOriginProtection()}, nil
}

// ServeHTTP routes on the escaped path, so a connector name holding '/' stays one path segment.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.EscapedPath(), Prefix)
	// No other site may frame the dashboard: a framed page would let it click buttons for a logged-in user.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; frame-ancestors 'none'")
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	if strings.HasPrefix(path, "/static/") {
		// The vendored files carry their version in their names, so they can be cached for good; ours can not.
		if strings.HasPrefix(path, "/static/vendor/") {
			w.Header().Set("Cache-Control", "public, max-age=31536000, immutable")
		} else {
			w.Header().Set("Cache-Control", "no-cache")
		}
		h.files.ServeHTTP(w, r)
		return
	}
	if err := h.csrf.Check(r); err != nil {
		h.fail(w, r, &apiError{Status: http.StatusForbidden, Message: "Refused a cross-origin request: " + err.Error()})
		return
	}
	var err error
	switch {
	case path == "" || path == "/":
		err = h.onlyGet(r, func() error { return h.connectorsPage(w, r) })
	case path == "/fragments/connectors":
		err = h.onlyGet(r, func() error { return h.connectorsFragment(w, r) })
	case path == "/workers":
		err = h.onlyGet(r, func() error { return h.workersPage(w, r, false) })
	case path == "/fragments/workers":
		err = h.onlyGet(r, func() error { return h.workersPage(w, r, true) })
	case path == "/new":
		err = h.createPage(w, r)
	case strings.HasPrefix(path, "/connectors/"):
		err = h.connectorRoute(w, r, strings.TrimPrefix(path, "/connectors/"))
	default:
		err = &apiError{Status: http.StatusNotFound, Message: "No such page: " + r.URL.Path}
	}
	if err != nil {
		h.fail(w, r, err)
	}
}

// connectorRoute serves /connectors/{name}[/{view}] where name is path-escaped.
func (h *Handler) connectorRoute(w http.ResponseWriter, r *http.Request, rest string) error {
	escaped, view, _ := strings.Cut(rest, "/")
	name, err := url.PathUnescape(escaped)
	if err != nil || name == "" {
		return &apiError{Status: http.StatusNotFound, Message: "No such page: " + r.URL.Path}
	}
	switch view {
	case "":
		return h.onlyGet(r, func() error { return h.connectorPage(w, r, name, pageMsg{}) })
	case "live":
		return h.onlyGet(r, func() error { return h.liveFragment(w, r, name) })
	case "action":
		if r.Method != http.MethodPost {
			return errMethod
		}
		return h.action(w, r, name)
	case "edit":
		return h.editPage(w, r, name)
	case "offsets":
		return h.offsetsPage(w, r, name)
	case "groups":
		return h.onlyGet(r, func() error { return h.groupsPage(w, r, name, false) })
	case "groups-live":
		return h.onlyGet(r, func() error { return h.groupsPage(w, r, name, true) })
	case "failover":
		return h.failoverPage(w, r, name, false)
	case "failover-live":
		return h.onlyGet(r, func() error { return h.failoverPage(w, r, name, true) })
	case "failback":
		return h.failbackPage(w, r, name, false)
	case "failback-live":
		return h.onlyGet(r, func() error { return h.failbackPage(w, r, name, true) })
	}
	return &apiError{Status: http.StatusNotFound, Message: "No such page: " + r.URL.Path}
}

var errMethod = &apiError{Status: http.StatusMethodNotAllowed, Message: "Method not allowed"}

func (h *Handler) onlyGet(r *http.Request, f func() error) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return errMethod
	}
	return f()
}

// fail renders an error page carrying the API's message verbatim.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status := http.StatusInternalServerError
	var ae *apiError
	if errors.As(err, &ae) {
		status = ae.Status
	} else {
		h.log.Error("dashboard page failed", "path", r.URL.Path, "error", err)
	}
	h.render(w, r, status, "error", struct {
		Title string
		Error string
	}{Title: "Error", Error: err.Error()})
}

// redirect sends the browser to a page after a successful write (post/redirect/get), with a notice to show.
func redirect(w http.ResponseWriter, r *http.Request, to, notice string) {
	if notice != "" {
		to += "?notice=" + url.QueryEscape(notice)
	}
	http.Redirect(w, r, to, http.StatusSeeOther)
}
