package web

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// field is one config key on a form: what the user sees and typed, and what /validate said about it.
type field struct {
	Key, Label, Type, Doc, Default, Value string
	Required, Password                    bool
	Errors                                []string
}

// fieldGroup is a config group of the plugin's definitions, in the definitions' order.
type fieldGroup struct {
	Name   string
	Open   bool
	Fields []*field
}

type editData struct {
	Title     string
	Name      string
	Class     string
	Fields    []*field
	Extra     string
	Errors    []string // validation errors of keys the form has no field for
	Msg       pageMsg
	Remove    map[string]bool
	OtherKeys []string
}

// parseExtra reads "key=value" lines; blank lines and lines starting with # are skipped.
func parseExtra(text string) (map[string]string, error) {
	out := map[string]string{}
	for i, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" || strings.HasPrefix(strings.TrimSpace(line), "#") {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, &apiError{Status: http.StatusBadRequest, Message: fmt.Sprintf("Line %d of the added keys is not key=value: %q", i+1, line)}
		}
		out[strings.TrimSpace(k)] = v
	}
	return out, nil
}

// validate asks the API to validate config as a connector of class and returns the errors by key (keys with
// no error are absent). It is the same check a create or an update makes, so the form shows what the write
// would refuse, next to the field it concerns.
func (h *Handler) validate(ctx context.Context, class string, config map[string]string) (map[string][]string, error) {
	var res configInfos
	if err := h.api.do(ctx, http.MethodPut, "/connector-plugins/"+pathSegment(class)+"/config/validate", config, &res); err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, c := range res.Configs {
		if c.Value != nil && len(c.Value.Errors) > 0 {
			out[c.Value.Name] = append(out[c.Value.Name], c.Value.Errors...)
		}
	}
	return out, nil
}

// editPage shows a connector's config as a form (GET) and saves it (POST). Saving starts from the stored
// config, so keys the form does not show are kept; a password field left empty keeps the stored value, which
// is never sent to the browser; removing a key takes its own tick.
func (h *Handler) editPage(w http.ResponseWriter, r *http.Request, name string) error {
	ctx := r.Context()
	var info connectorInfo
	path := connectorPath(name)
	if r.Method == http.MethodPost && h.canWrite(r) {
		// Saving validates and writes the whole config, stored secrets included: the API shows them only to an
		// admin who asks. The form never shows them (see below). A reader's save meets the API's 403 on the PUT.
		path += "?revealSecrets=true"
	}
	if err := h.api.get(ctx, path, &info); err != nil {
		return err
	}
	class := info.Config["connector.class"]
	secret := h.passwordKeys(r, class)
	d := editData{Title: "Edit " + name, Name: name, Class: class, Remove: map[string]bool{}}
	keys := make([]string, 0, len(info.Config))
	for k := range info.Config {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	byKey := map[string]*field{}
	for _, k := range keys {
		f := &field{Key: k, Label: k, Value: info.Config[k], Password: secret[k] || isSecretKey(k)}
		if f.Password {
			f.Value = ""
		}
		d.Fields = append(d.Fields, f)
		byKey[k] = f
	}
	if posted, err := h.formRequest(w, r, "edit", d); !posted {
		return err
	}
	// What the user typed goes back into the form whatever happens next.
	config := make(map[string]string, len(info.Config))
	for k, v := range info.Config {
		config[k] = v
	}
	ks, vs := r.PostForm["k"], r.PostForm["v"]
	for i := range min(len(ks), len(vs)) {
		f, ok := byKey[ks[i]]
		if !ok {
			continue
		}
		f.Value = vs[i]
		if f.Password && vs[i] == "" {
			continue // unchanged
		}
		config[ks[i]] = vs[i]
	}
	for _, k := range r.PostForm["remove"] {
		if _, ok := byKey[k]; ok && k != "connector.class" && k != "name" {
			d.Remove[k] = true
			delete(config, k)
		}
	}
	d.Extra = r.PostForm.Get("extra")
	extra, err := parseExtra(d.Extra)
	if err != nil {
		d.Msg.Error = err.Error()
		h.render(w, r, http.StatusBadRequest, "edit", d)
		return nil
	}
	for k, v := range extra {
		config[k] = v
	}
	if err := h.checkAndSave(ctx, class, config, byKey, &d.Errors, func() error {
		return h.api.do(ctx, http.MethodPut, connectorPath(name, "config"), config, nil)
	}); err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			return err
		}
		d.Msg.Error = err.Error()
		h.render(w, r, ae.Status, "edit", d)
		return nil
	}
	redirect(w, r, connURL(name, ""), "Configuration saved.")
	return nil
}

// errInvalid reports that /validate found errors, which the form shows beside their fields.
var errInvalid = &apiError{Status: http.StatusBadRequest, Message: "The configuration has errors; nothing was saved. See the fields marked below."}

// checkAndSave validates config, puts each error on its field (or into other when the form has none for the
// key), and calls save only when there is no error.
func (h *Handler) checkAndSave(ctx context.Context, class string, config map[string]string, byKey map[string]*field, other *[]string, save func() error) error {
	if class == "" {
		return &apiError{Status: http.StatusBadRequest, Message: "The connector has no connector.class."}
	}
	errs, err := h.validate(ctx, class, config)
	if err != nil {
		return err
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if f, ok := byKey[k]; ok {
			f.Errors = errs[k]
		} else {
			for _, e := range errs[k] {
				*other = append(*other, k+": "+e)
			}
		}
	}
	if len(errs) > 0 {
		return errInvalid
	}
	return save()
}

type createData struct {
	Title   string
	Plugins []pluginInfo
	Class   string
	Name    field
	Groups  []*fieldGroup
	Extra   string
	Errors  []string
	Msg     pageMsg
}

// createPage offers the connector types (GET without class), shows the form of one built from its plugin
// config definitions (GET ?class=), and creates the connector (POST). Only fields given a value are sent, so
// the connector keeps the definitions' defaults for the rest.
func (h *Handler) createPage(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	class := r.URL.Query().Get("class")
	d := createData{Title: "New connector", Class: class, Name: field{Key: "name", Label: "Name", Required: true}}
	if class == "" {
		if err := h.api.get(ctx, "/connector-plugins", &d.Plugins); err != nil {
			return err
		}
		h.render(w, r, http.StatusOK, "create", d)
		return nil
	}
	d.Title = "New " + shortClass(class)
	defs, err := h.defs(r, class)
	if err != nil {
		return err
	}
	byKey := map[string]*field{"name": &d.Name}
	groups := map[string]*fieldGroup{}
	for _, k := range defs {
		if k.Name == "name" || k.Name == "connector.class" {
			continue
		}
		g := cmp.Or(ptrOr(k.Group), "Other")
		fg, ok := groups[g]
		if !ok {
			fg = &fieldGroup{Name: g}
			groups[g] = fg
			d.Groups = append(d.Groups, fg)
		}
		f := &field{Key: k.Name, Label: cmp.Or(k.DisplayName, k.Name), Type: k.Type, Doc: k.Documentation,
			Default: ptrOr(k.DefaultValue), Required: k.Required, Password: k.Type == "PASSWORD"}
		fg.Fields = append(fg.Fields, f)
		fg.Open = fg.Open || f.Required
		byKey[k.Name] = f
	}
	// MM2 reaches its clusters through client configs under the cluster prefixes, which the definitions do not
	// list; without these two fields no connector made from the form could connect.
	clusters := &fieldGroup{Name: "Clusters", Open: true}
	for _, side := range []string{"source", "target"} {
		key := side + ".cluster.bootstrap.servers"
		if _, ok := byKey[key]; ok {
			continue
		}
		f := &field{Key: key, Label: strings.ToUpper(side[:1]) + side[1:] + " cluster bootstrap servers", Type: "LIST",
			Doc: "The " + side + " cluster's bootstrap.servers: a client config under the " + side + ".cluster. prefix, like every other client setting of that cluster (add those below)."}
		clusters.Fields = append(clusters.Fields, f)
		byKey[key] = f
	}
	if len(clusters.Fields) > 0 {
		d.Groups = append([]*fieldGroup{clusters}, d.Groups...)
	}
	if len(d.Groups) > 0 {
		d.Groups[0].Open = true
	}
	if posted, err := h.formRequest(w, r, "create", d); !posted {
		return err
	}
	d.Name.Value = r.PostForm.Get("name")
	config := map[string]string{"connector.class": class, "name": d.Name.Value}
	for k, f := range byKey {
		if k == "name" {
			continue
		}
		f.Value = r.PostForm.Get("c:" + k)
		if f.Value != "" {
			config[k] = f.Value
		}
	}
	d.Extra = r.PostForm.Get("extra")
	extra, err := parseExtra(d.Extra)
	if err == nil {
		for k, v := range extra {
			config[k] = v
		}
		err = h.checkAndSave(ctx, class, config, byKey, &d.Errors, func() error {
			return h.api.do(ctx, http.MethodPost, "/connectors", map[string]any{"name": d.Name.Value, "config": config}, nil)
		})
	}
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			return err
		}
		d.Msg.Error = err.Error()
		for _, g := range d.Groups {
			for _, f := range g.Fields {
				g.Open = g.Open || len(f.Errors) > 0
			}
		}
		h.render(w, r, ae.Status, "create", d)
		return nil
	}
	redirect(w, r, connURL(d.Name.Value, ""), "Connector created.")
	return nil
}

func ptrOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// formRequest shows a form page: it renders page with d for a GET or HEAD, and parses the form of a POST.
// posted says a parsed form waits to be handled; false, the response is written or err says what to answer.
func (h *Handler) formRequest(w http.ResponseWriter, r *http.Request, page string, d any) (posted bool, err error) {
	switch r.Method {
	case http.MethodGet, http.MethodHead:
		h.render(w, r, http.StatusOK, page, d)
		return false, nil
	case http.MethodPost:
		if err := r.ParseForm(); err != nil {
			return false, &apiError{Status: http.StatusBadRequest, Message: err.Error()}
		}
		return true, nil
	}
	return false, errMethod
}
