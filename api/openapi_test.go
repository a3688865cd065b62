package api

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"
)

// TestOpenAPIMatchesRouter fails when a route is missing from the OpenAPI document or the document describes
// an operation the router does not serve.
func TestOpenAPIMatchesRouter(t *testing.T) {
	t.Parallel()
	var routed []string
	s := &server{}
	err := chi.Walk(s.routes(), func(method, pattern string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routed = append(routed, method+" "+pattern)
		return nil
	})
	require.NoError(t, err)

	// Round-trip through JSON, as clients see it.
	b, err := json.Marshal(openAPIDocument())
	require.NoError(t, err)
	var doc struct {
		Paths map[string]map[string]struct {
			OperationID string                     `json:"operationId"`
			Responses   map[string]json.RawMessage `json:"responses"`
			Parameters  []struct {
				Name string `json:"name"`
				In   string `json:"in"`
			} `json:"parameters"`
		} `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(b, &doc))
	var documented []string
	ids := map[string]bool{}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			documented = append(documented, strings.ToUpper(method)+" "+path)
			require.NotEmpty(t, op.OperationID, "%s %s", method, path)
			require.False(t, ids[op.OperationID], "operationId %s is unique", op.OperationID)
			ids[op.OperationID] = true
			require.NotEmpty(t, op.Responses, "%s %s", method, path)
			// Every path template parameter is declared.
			for _, seg := range strings.Split(path, "/") {
				if strings.HasPrefix(seg, "{") {
					name := strings.Trim(seg, "{}")
					require.True(t, slices.ContainsFunc(op.Parameters, func(p struct {
						Name string `json:"name"`
						In   string `json:"in"`
					}) bool {
						return p.Name == name && p.In == "path"
					}), "%s %s declares %s", method, path, name)
				}
			}
		}
	}
	// The server serves these beside the API's router.
	routed = append(routed, "GET /metrics")
	slices.Sort(routed)
	slices.Sort(documented)
	require.Equal(t, routed, documented)

	var exported []string
	for _, r := range Routes() {
		exported = append(exported, r.Method+" "+r.Pattern)
	}
	exported = append(exported, "GET /metrics")
	slices.Sort(exported)
	require.Equal(t, routed, exported, "Routes lists the router's routes")
}

// TestOpenAPIReferencesResolve checks that every $ref names a schema or a shared response of the document.
func TestOpenAPIReferencesResolve(t *testing.T) {
	t.Parallel()
	doc := openAPIDocument()
	components := doc["components"].(obj)
	var walk func(v any)
	walk = func(v any) {
		switch v := v.(type) {
		case obj:
			if r, ok := v["$ref"].(string); ok {
				parts := strings.Split(strings.TrimPrefix(r, "#/components/"), "/")
				require.Len(t, parts, 2, r)
				require.Contains(t, components, parts[0], r)
				require.Contains(t, components[parts[0]].(obj), parts[1], r)
			}
			for _, e := range v {
				walk(e)
			}
		case []obj:
			for _, e := range v {
				walk(e)
			}
		}
	}
	walk(doc)
}

// TestOpenAPIDescribesUnavailability: every operation but /health's documents the database outage's 503.
func TestOpenAPIDescribesUnavailability(t *testing.T) {
	t.Parallel()
	for path, ops := range openAPIDocument()["paths"].(obj) {
		for method, op := range ops.(obj) {
			got := op.(obj)["responses"].(obj)["503"]
			if path == "/health" {
				require.Equal(t, "Still starting", got.(obj)["description"])
				continue
			}
			require.Equal(t, obj{"$ref": "#/components/responses/Unavailable"}, got, "%s %s", method, path)
		}
	}
}
