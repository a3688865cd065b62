package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
)

// apiError is a failed API call: the status and the API's message, shown to the user verbatim.
type apiError struct {
	Status  int
	Code    int    `json:"error_code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return e.Message
}

// client calls the REST API's handler in-process, so the dashboard sees what any API client sees.
type client struct {
	api http.Handler
}

// connectorPath is /connectors/{name}[/rest] with the name path-escaped: names may hold '/', spaces, '?'.
func connectorPath(name string, rest ...string) string {
	p := "/connectors/" + url.PathEscape(name)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// do sends method path with body (JSON-encoded unless nil) and decodes a 2xx answer into out (unless nil).
// A non-2xx answer is an *apiError carrying the API's message.
func (c client) do(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode request for %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://kmirror"+path, rd)
	if err != nil {
		return fmt.Errorf("build request %s %s: %w", method, path, err)
	}
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	rec := httptest.NewRecorder()
	c.api.ServeHTTP(rec, req)
	res := rec.Result()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode/100 != 2 {
		e := &apiError{Status: res.StatusCode}
		if json.Unmarshal(raw, e) != nil || e.Message == "" {
			e.Message = strings.TrimSpace(string(raw))
		}
		return e
	}
	if out == nil || len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("decode answer of %s %s: %w", method, path, err)
	}
	return nil
}

func (c client) get(ctx context.Context, path string, out any) error {
	return c.do(ctx, http.MethodGet, path, nil, out)
}
