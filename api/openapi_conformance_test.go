package api_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
)

// exchange is one request to the server and what the server must answer.
type exchange struct {
	method, path, body string
	status             int
	// malformed: the server refuses the request for its form (400), so the document must refuse it too. Every
	// other request, including those the server answers with a 4xx about the state or the config's meaning,
	// must be valid by the document.
	malformed bool
}

// TestOpenAPIDocumentMatchesServer checks GET /openapi.json against the server with kin-openapi's
// openapi3filter: the document is valid OpenAPI 3; every request below is valid by it exactly when the server
// accepts the request's form; and every answer (status, headers, body) is one the document describes. The
// requests cover every route of the API and the forms Connect's clients send (Boolean query flags as Jersey
// reads them, numbers as config values, case-insensitive levels and states) or get wrong.
func TestOpenAPIDocumentMatchesServer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()

	doc := loadOpenAPI(t, f)
	router, err := legacyrouter.NewRouter(doc)
	require.NoError(t, err)

	f.create("c", sourceConfig())
	f.setStatus("c", store.StateRunning, store.StateRunning, store.StateFailed)
	stopped := jsonText(t, map[string]any{"name": "s", "config": sourceConfig(), "initial_state": "STOPPED"})
	src := jsonText(t, sourceConfig())
	withValue := func(k string, v any) string {
		m := map[string]any{}
		for key, val := range sourceConfig() {
			m[key] = val
		}
		m[k] = v
		return jsonText(t, m)
	}
	validate := func(body string) string { return strings.Replace(body, `{`, `{"name":"x",`, 1) }
	offsets := `{"offsets":[{"partition":{"cluster":"A","topic":"t","partition":0},"offset":{"offset":5}}]}`

	for _, x := range []exchange{
		{method: "GET", path: "/", status: 200},
		{method: "GET", path: "/health", status: 200},
		{method: "GET", path: "/openapi.json", status: 200},
		{method: "GET", path: "/workers", status: 200},

		{method: "POST", path: "/connectors", body: stopped, status: 201},
		{method: "POST", path: "/connectors", body: stopped, status: 409},
		{method: "POST", path: "/connectors", body: `{"name":"p","config":` + src + `,"initial_state":"paused"}`, status: 201},
		{method: "POST", path: "/connectors", body: `{"name":"n","config":` + withValue("tasks.max", 2) + `}`, status: 201},
		{method: "POST", path: "/connectors", body: `{"name":"m","config":` + withValue("tasks.max", 0) + `}`, status: 400},
		{method: "POST", path: "/connectors", body: `{"name":"m","config":` + withValue("tasks.max", map[string]any{"a": 1}) + `}`, status: 400, malformed: true},
		{method: "POST", path: "/connectors", body: `{"name":"m","config":{"source.cluster.alias":"A"}}`, status: 400, malformed: true},
		{method: "POST", path: "/connectors", body: `{"name":"m"}`, status: 400, malformed: true},
		{method: "POST", path: "/connectors", body: `{"name":"m","config":` + src + `,"initial_state":"sleeping"}`, status: 400, malformed: true},
		{method: "POST", path: "/connectors", body: `{"name":"m","config":` + src + `,"extra":1}`, status: 400, malformed: true},
		{method: "PUT", path: "/connectors/s/stop", status: 204},

		{method: "GET", path: "/connectors", status: 200},
		{method: "GET", path: "/connectors?expand=status", status: 200},
		{method: "GET", path: "/connectors?expand=info&expand=status", status: 200},
		{method: "GET", path: "/connectors?expand=garbage", status: 200},
		{method: "GET", path: "/connectors/c", status: 200},
		{method: "GET", path: "/connectors/nope", status: 404},
		{method: "GET", path: "/connectors/c/config", status: 200},
		{method: "GET", path: "/connectors/c/config?revealSecrets=true", status: 200},
		{method: "GET", path: "/connectors/c?revealSecrets=garbage", status: 200},
		{method: "GET", path: "/connectors?expand=info&revealSecrets=TRUE", status: 200},
		{method: "PUT", path: "/connectors/q2/config", body: withValue("target.cluster.ssl.key.password", "[hidden]"), status: 400},
		{method: "PUT", path: "/connectors/c/config", body: src, status: 200},
		{method: "PUT", path: "/connectors/q/config", body: src, status: 201},
		{method: "PUT", path: "/connectors/c/config", body: `{"source.cluster.alias":"A"}`, status: 400, malformed: true},
		{method: "PUT", path: "/connectors/c/config", body: withValue("x", []any{1}), status: 400, malformed: true},
		{method: "PATCH", path: "/connectors/c/config", body: `{"tasks.max":"2","x":null}`, status: 200},
		{method: "PATCH", path: "/connectors/c/config", body: `{"tasks.max":true}`, status: 400},
		{method: "PATCH", path: "/connectors/c/config", body: `{"tasks.max":{}}`, status: 400, malformed: true},
		{method: "PATCH", path: "/connectors/nope/config", body: `{"tasks.max":"2"}`, status: 404},
		{method: "DELETE", path: "/connectors/q", status: 204},
		{method: "DELETE", path: "/connectors/q", status: 404},

		{method: "GET", path: "/connectors/c/status", status: 200},
		{method: "GET", path: "/connectors/p/status", status: 404},
		{method: "GET", path: "/connectors/c/notices", status: 200},
		{method: "GET", path: "/connectors/c/groups", status: 404},
		{method: "GET", path: "/connectors/c/groups/g/offsets", status: 404},
		{method: "GET", path: "/connectors/c/partitions", status: 200},
		{method: "POST", path: "/connectors/c/restart", status: 204},
		{method: "POST", path: "/connectors/c/restart?includeTasks=true", status: 202},
		{method: "POST", path: "/connectors/c/restart?includeTasks=garbage&onlyFailed=null", status: 204},
		{method: "POST", path: "/connectors/nope/restart", status: 404},
		{method: "PUT", path: "/connectors/c/pause", status: 202},
		{method: "PUT", path: "/connectors/c/resume", status: 202},
		{method: "PUT", path: "/connectors/nope/stop", status: 404},
		{method: "GET", path: "/connectors/c/tasks", status: 200},
		{method: "GET", path: "/connectors/c/tasks-config", status: 200},
		{method: "GET", path: "/connectors/c/tasks/1/status", status: 200},
		{method: "GET", path: "/connectors/c/tasks/7/status", status: 404},
		{method: "POST", path: "/connectors/c/tasks/0/restart", status: 204},
		{method: "POST", path: "/connectors/c/tasks/7/restart", status: 404},
		{method: "GET", path: "/connectors/c/topics", status: 200},
		{method: "PUT", path: "/connectors/c/topics/reset", status: 202},

		{method: "GET", path: "/connectors/c/offsets", status: 200},
		{method: "PATCH", path: "/connectors/s/offsets", body: offsets, status: 200},
		{method: "GET", path: "/connectors/s/offsets", status: 200},
		{method: "PATCH", path: "/connectors/c/offsets", body: offsets, status: 400},
		{method: "PATCH", path: "/connectors/s/offsets", body: `{"offsets":[]}`, status: 400, malformed: true},
		{method: "PATCH", path: "/connectors/s/offsets", body: `{}`, status: 400, malformed: true},
		{method: "PATCH", path: "/connectors/s/offsets", body: `{"offsets":[{"partition":{},"offset":{},"x":1}]}`, status: 400, malformed: true},
		{method: "DELETE", path: "/connectors/s/offsets", status: 200},
		{method: "DELETE", path: "/connectors/nope/offsets", status: 404},

		{method: "GET", path: "/connector-plugins", status: 200},
		{method: "GET", path: "/connector-plugins?connectorsOnly=false", status: 200},
		{method: "GET", path: "/connector-plugins?connectorsOnly=null", status: 200},
		{method: "GET", path: "/connector-plugins/MirrorSource/config", status: 200},
		{method: "GET", path: "/connector-plugins/ByteArrayConverter/config", status: 200},
		{method: "GET", path: "/connector-plugins/Nope/config", status: 404},
		{method: "PUT", path: "/connector-plugins/MirrorSource/config/validate", body: validate(src), status: 200},
		{method: "PUT", path: "/connector-plugins/MirrorSource/config/validate", body: validate(withValue("tasks.max", "0")), status: 200},
		{method: "PUT", path: "/connector-plugins/MirrorSource/config/validate", body: `{"name":"x"}`, status: 400, malformed: true},
		{method: "PUT", path: "/connector-plugins/MirrorHeartbeat/config/validate", body: validate(src), status: 400},

		{method: "GET", path: "/admin/loggers", status: 200},
		{method: "GET", path: "/admin/loggers/ROOT", status: 200},
		{method: "GET", path: "/admin/loggers/com.example", status: 404},
		{method: "PUT", path: "/admin/loggers/root", body: `{"level":"info"}`, status: 200},
		{method: "PUT", path: "/admin/loggers/root?scope=galaxy", body: `{"level":"WARN","note":1}`, status: 200},
		{method: "PUT", path: "/admin/loggers/root?scope=Cluster", body: `{"level":"ERROR"}`, status: 204},
		{method: "PUT", path: "/admin/loggers/root", body: `{"level":"LOUD"}`, status: 404},
		{method: "PUT", path: "/admin/loggers/root", body: `{"level":1}`, status: 404},
		{method: "PUT", path: "/admin/loggers/root", body: `{}`, status: 400, malformed: true},
		{method: "PUT", path: "/admin/loggers/root", body: `{"level":{"a":1}}`, status: 400, malformed: true},
		{method: "PUT", path: "/admin/loggers/root", body: `{"level":"INFO","note":{"a":1}}`, status: 400, malformed: true},
	} {
		name := x.method + " " + x.path + " " + x.body
		r := f.do(x.method, x.path, x.body)
		require.Equal(t, x.status, r.status, "%s: %s", name, r.body)

		req, err := http.NewRequest(x.method, f.url+x.path, strings.NewReader(x.body))
		require.NoError(t, err)
		if x.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		route, params, err := router.FindRoute(req)
		require.NoError(t, err, name)
		// These requests carry no credentials (the fixture serves without authentication, which the document's
		// optional security allows); server/security_test.go checks the 401 and 403 answers.
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{MultiError: true, AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}}
		reqErr := openapi3filter.ValidateRequest(ctx, in)
		if x.malformed {
			require.Error(t, reqErr, "%s: the server refuses it (%s), so must the document", name, r.body)
		} else {
			require.NoError(t, reqErr, "%s: the server takes it (%d), so must the document", name, r.status)
		}

		// The answer is one the document describes, whether or not the request was.
		in.Options = &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}
		respErr := openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: r.status, Header: r.header, Body: io.NopCloser(bytes.NewReader([]byte(r.body))),
		})
		require.NoError(t, respErr, "%s: answer %d %s", name, r.status, r.body)
	}
}

// loadOpenAPI reads the document the server serves and checks that it is valid OpenAPI 3.
func loadOpenAPI(t *testing.T, f *fixture) *openapi3.T {
	t.Helper()
	r := f.do("GET", "/openapi.json", "")
	require.Equal(t, http.StatusOK, r.status)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData([]byte(r.body))
	require.NoError(t, err)
	require.NoError(t, doc.Validate(loader.Context))
	doc.Servers = openapi3.Servers{{URL: f.url}}
	return doc
}
