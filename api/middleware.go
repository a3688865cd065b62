package api

import (
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"
)

// escapedRoutePath makes chi route on the escaped path with one trailing slash removed.
//
// Connector names may contain '/', which clients send as %2F. Routing on the decoded path would split such a
// name in two, and chi only routes on the raw path when Go kept one (it does not for, say, "a%25b"), so the
// router always sees the escaped path and handlers unescape each segment (pathParam). Jersey tolerates a
// trailing slash, and kcctl relies on it (GET /connectors/).
func escapedRoutePath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.EscapedPath()
		if len(p) > 1 && strings.HasSuffix(p, "/") {
			p = p[:len(p)-1]
		}
		if p == "" {
			p = "/"
		}
		chi.RouteContext(r.Context()).RoutePath = p
		next.ServeHTTP(w, r)
	})
}

// pathParam returns the unescaped value of a path segment. Routing on the escaped path guarantees the segment
// is a valid escape sequence, so a failure here only comes from a malformed request line: it is a 404, as a
// path Jersey cannot match. A NUL (%00) gets a 400: no name kmirror stores can hold one (PostgreSQL text
// cannot), so the request can only be a mistake, and it must not reach the database.
func pathParam(r *http.Request, name string) (string, error) {
	v, err := url.PathUnescape(chi.URLParam(r, name))
	if err != nil {
		return "", errNotFound
	}
	if strings.ContainsRune(v, 0) {
		return "", errorf(http.StatusBadRequest, "The %s in the path contains a NUL character (%%00): no %s can have one", name, name)
	}
	if !utf8.ValidString(v) {
		return "", errorf(http.StatusBadRequest, "The %s in the path is not valid UTF-8 once unescaped: no %s can have such a name", name, name)
	}
	return v, nil
}

// taskParam returns the {task} segment as Jersey's Integer path parameter: anything that is not a 32-bit
// integer matches no resource method, hence 404.
func taskParam(r *http.Request) (int, error) {
	v, err := pathParam(r, "task")
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(v, 10, 32)
	if err != nil {
		return 0, errNotFound
	}
	return int(n), nil
}

// consumesJSON is Jersey's @Consumes(application/json) check: a request that declares a content type JSON
// readers cannot read gets 415, whether or not it has a body. A request without Content-Type is read as JSON.
func consumesJSON(r *http.Request) error {
	ct := r.Header.Get("Content-Type")
	if ct == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil || !jsonCompatible(mt) {
		return errUnsupportedMedia
	}
	return nil
}

// producesJSON is Jersey's @Produces(application/json) check: an Accept header that rules JSON out gets 406.
// A media range with q=0 excludes what it names.
func producesJSON(r *http.Request) error {
	seen := false
	for _, header := range r.Header.Values("Accept") {
		for _, rng := range strings.Split(header, ",") {
			rng = strings.TrimSpace(rng)
			if rng == "" {
				continue
			}
			mt, params, err := mime.ParseMediaType(rng)
			if err != nil {
				continue
			}
			seen = true
			if q, ok := params["q"]; ok {
				if f, err := strconv.ParseFloat(q, 64); err == nil && f <= 0 {
					continue
				}
			}
			if jsonCompatible(mt) {
				return nil
			}
		}
	}
	if !seen { // no Accept header, or nothing in it we can read: anything goes
		return nil
	}
	return errNotAcceptable
}

func jsonCompatible(mediaType string) bool {
	switch strings.ToLower(mediaType) {
	case "application/json", "application/*", "*/*":
		return true
	}
	return false
}
