package web

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// pageFiles are the pages, each parsed together with layout.html; a page's fragments are templates of its file.
var pageFiles = []string{"error", "connectors", "connector", "edit", "create", "workers", "groups", "offsets", "failover", "failback"}

var funcs = template.FuncMap{
	// connURL is the dashboard URL of a connector's page or view, the name path-escaped.
	"connURL": connURL,
	// apiPath is the REST path of a connector's resource, for the browser's own calls (the charts).
	"apiPath":   func(name, rest string) string { return connectorPath(name, rest) },
	"shortName": shortClass,
	"num":       formatNum,
	"rate":      func(f float64) string { return formatNum(f) + "/s" },
	"bytes":     formatBytes,
	"i64":       func(p *int64) string { return optInt(p) },
	"f64":       func(p *float64) string { return optSeconds(p) },
	"lower":     strings.ToLower,
	"firstLine": func(s string) string { l, _, _ := strings.Cut(s, "\n"); return l },
	"idFor":     fieldID,
	"mulPct":    func(p *float64) float64 { return *p * 100 },
}

// parsePages parses every page; canWrite is what the pages' canWrite function answers (a parsed set per
// answer, because an executed template can no longer be given other functions).
func parsePages(canWrite bool) (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).Funcs(template.FuncMap{"canWrite": func() bool { return canWrite }}).
		ParseFS(templateFS, "templates/layout.html", "templates/report.html")
	if err != nil {
		return nil, fmt.Errorf("web: parse layout: %w", err)
	}
	pages := make(map[string]*template.Template, len(pageFiles))
	for _, p := range pageFiles {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("web: parse page %s: %w", p, err)
		}
		pages[p] = t
	}
	return pages, nil
}

// render writes page (the whole layout) or, when fragment is set, one named template of the page.
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, page string, data any) {
	h.renderTemplate(w, r, status, page, "layout.html", data)
}

func (h *Handler) renderFragment(w http.ResponseWriter, r *http.Request, page, fragment string, data any) {
	h.renderTemplate(w, r, http.StatusOK, page, fragment, data)
}

// renderList renders a page that polls its list fragment: the fragment alone when fragment asks for it, else
// the whole page.
func (h *Handler) renderList(w http.ResponseWriter, r *http.Request, fragment bool, page string, data any) {
	if fragment {
		h.renderFragment(w, r, page, "list", data)
	} else {
		h.render(w, r, http.StatusOK, page, data)
	}
}

func (h *Handler) renderTemplate(w http.ResponseWriter, r *http.Request, status int, page, name string, data any) {
	// Rendered into a buffer first: a template error mid-page must not leave half a page with a 200.
	var buf bytes.Buffer
	pages := h.pages
	if !h.canWrite(r) {
		pages = h.viewPages
	}
	if err := pages[page].ExecuteTemplate(&buf, name, data); err != nil {
		h.log.Error("render dashboard page", "page", page, "template", name, "path", r.URL.Path, "error", err)
		http.Error(w, "render "+page+": "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// shortClass is a connector class without its package: MirrorSourceConnector.
func shortClass(class string) string {
	if i := strings.LastIndexByte(class, '.'); i >= 0 {
		return class[i+1:]
	}
	return class
}

func formatNum(f float64) string {
	switch {
	case math.IsNaN(f):
		return "–"
	case f >= 1e6:
		return strconv.FormatFloat(f/1e6, 'f', 1, 64) + "M"
	case f >= 1e4:
		return strconv.FormatFloat(f/1e3, 'f', 1, 64) + "k"
	case f == math.Trunc(f):
		return strconv.FormatFloat(f, 'f', 0, 64)
	default:
		return strconv.FormatFloat(f, 'f', 1, 64)
	}
}

func formatBytes(f float64) string {
	units := []string{"B/s", "KB/s", "MB/s", "GB/s"}
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	return strconv.FormatFloat(f, 'f', 1, 64) + " " + units[i]
}

func optInt(p *int64) string {
	if p == nil {
		return "–"
	}
	return strconv.FormatInt(*p, 10)
}

func optSeconds(p *float64) string {
	if p == nil {
		return "–"
	}
	return strconv.FormatFloat(*p, 'f', 1, 64) + " s"
}

// fieldID is an HTML id for a config key's input (ids may not hold spaces; keys hold dots, which are fine).
func fieldID(key string) string {
	return "f-" + strings.NewReplacer(" ", "_", "\t", "_").Replace(key)
}

// connURL is the dashboard URL of a connector's page (view "") or one of its views, the name path-escaped.
func connURL(name, view string) string {
	u := Prefix + "/connectors/" + url.PathEscape(name)
	if view != "" {
		u += "/" + view
	}
	return u
}
