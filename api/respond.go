package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
)

// writeJSON writes v as compact JSON. HTML escaping is off because Jackson does not escape '<', '>' or '&',
// and connector configs are full of them.
func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		_ = json.NewEncoder(&buf).Encode(errorBody{ErrorCode: status, Message: "encode response: " + err.Error()})
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

// locationOf is the absolute URL of a connector, for the Location header of a create. The name is escaped as
// one path segment ('/' becomes %2F), so the URL routes back to the connector.
func locationOf(r *http.Request, name string) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/connectors/" + url.PathEscape(name)
}
