package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestUnknownRoutesAre404(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, path := range []string{"/nope", "/connectors/c/nope", "/connectors/c/tasks/x/status", "/connectors/c/tasks/99999999999/status", "/admin"} {
		requireError(t, f.do("GET", path, ""), http.StatusNotFound, "HTTP 404 Not Found")
	}
	// Connect's worker-to-worker endpoints do not exist in kmirror.
	requireError(t, f.do("POST", "/connectors/c/tasks", `[{"a":"b"}]`), http.StatusNotFound, "HTTP 404 Not Found")
	requireError(t, f.do("PUT", "/connectors/c/fence", ""), http.StatusNotFound, "HTTP 404 Not Found")
}

func TestWrongMethodIs405WithAllow(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.do("DELETE", "/connectors", "")
	requireError(t, r, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	require.Equal(t, []string{"GET", "POST", "HEAD"}, r.header.Values("Allow"))

	// Mastercard's restapi provider defaults to PUT /connectors/{id}, which Connect does not route.
	r = f.do("PUT", "/connectors/c", `{}`)
	requireError(t, r, http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	require.Equal(t, []string{"GET", "DELETE", "HEAD"}, r.header.Values("Allow"))

	requireError(t, f.do("POST", "/connectors/c/pause", ""), http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
	requireError(t, f.do("GET", "/connectors/c/restart", ""), http.StatusMethodNotAllowed, "HTTP 405 Method Not Allowed")
}

func TestNonJSONBodiesAre415(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// curl -d without -H sends a form content type.
	r := f.do("POST", "/connectors", `{"name":"c","config":{}}`, "Content-Type", "application/x-www-form-urlencoded")
	requireError(t, r, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
	r = f.do("PUT", "/connectors/c/config", `{}`, "Content-Type", "text/plain")
	requireError(t, r, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
	r = f.do("PUT", "/admin/loggers/root", `{"level":"INFO"}`, "Content-Type", "text/plain")
	requireError(t, r, http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")
	// As in Jersey, the check applies to every method of a resource that consumes JSON...
	requireError(t, f.do("PUT", "/connectors/c/pause", "", "Content-Type", "text/plain"), http.StatusUnsupportedMediaType, "HTTP 415 Unsupported Media Type")

	// ...but not to the root resource, and JSON with parameters or without a Content-Type is fine.
	require.Equal(t, http.StatusOK, f.do("GET", "/", "", "Content-Type", "text/plain").status)
	require.Equal(t, http.StatusOK, f.do("GET", "/connectors", "", "Content-Type", "application/json; charset=utf-8").status)
	r = f.do("PUT", "/connector-plugins/MirrorSource/config/validate", `{"connector.class":"MirrorSource"}`, "Content-Type", "")
	require.Equal(t, http.StatusOK, r.status, r.body)
}

func TestNonJSONAcceptIs406(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connectors", "", "Accept", "text/html"), http.StatusNotAcceptable, "HTTP 406 Not Acceptable")
	requireError(t, f.do("GET", "/", "", "Accept", "application/json;q=0, text/plain"), http.StatusNotAcceptable, "HTTP 406 Not Acceptable")
	// What browsers send.
	r := f.do("GET", "/connectors", "", "Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	requireJSON(t, r, http.StatusOK, `[]`)
	requireJSON(t, f.do("GET", "/connectors", "", "Accept", "application/json"), http.StatusOK, `[]`)
}

func TestBodyOverOneMebibyteIs413(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	big := `{"name":"c","x":"` + strings.Repeat("a", 1<<20) + `"}`
	requireError(t, f.do("PUT", "/connectors/c/config", big), http.StatusRequestEntityTooLarge,
		"Request body is larger than the limit of 1048576 bytes")
	names, err := f.store.ListConnectorNames(t.Context())
	require.NoError(t, err)
	require.Empty(t, names)
}

func TestMalformedBodiesAre400(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create("c", sourceConfig())
	for _, tc := range []struct {
		method, path, body, message string
	}{
		{"POST", "/connectors", `{"name":`, "Malformed JSON in request body: unexpected end of JSON input"},
		{"POST", "/connectors", `{"name":"x"} {}`, "Malformed JSON in request body: invalid character '{' after top-level value"},
		{"POST", "/connectors", `[]`, `Invalid request body: expected a JSON object with "name" and "config", not an array`},
		{"POST", "/connectors", ` `, `Invalid request body: the body is empty; expected a JSON object with "name" and "config"`},
		{"POST", "/connectors", `{"name":"x"}`, `Invalid request body: "config" is missing; expected {"name": ..., "config": {...}}`},
		{"POST", "/connectors", `{"name":"x","config":{},"tasks":[]}`, `Invalid request body: Unrecognized field "tasks" (known fields: "name", "config", "initial_state")`},
		{"POST", "/connectors", `{"name":"x","config":[]}`, `Invalid request body: "config" must be an object of configuration properties, not an array`},
		{"POST", "/connectors", `{"name":"x","config":{"a":{"b":"c"}}}`, `Invalid request body: the value of "a" in "config" must be a string, number, boolean or null, not an object`},
		{"POST", "/connectors", `{"name":{},"config":{}}`, `Invalid request body: "name" must be a string, not an object`},
		{"POST", "/connectors", `{"name":"x","config":{},"initial_state":"SLEEPING"}`, `Invalid request body: "initial_state" must be one of RUNNING, PAUSED or STOPPED, not "SLEEPING"`},
		// The POST envelope is not a flat config.
		{"PUT", "/connectors/c/config", `{"name":"c","config":{"a":"b"}}`, `Invalid request body: the value of "config" must be a string, number, boolean or null, not an object`},
		{"PATCH", "/connectors/c/config", `{"tasks.max":[1]}`, `Invalid request body: the value of "tasks.max" must be a string, number, boolean or null, not an array`},
		{"PUT", "/connector-plugins/MirrorSource/config/validate", `"x"`, `Invalid request body: expected a JSON object of configuration properties, not a string`},
		// The bodies OffsetsApiIntegrationTest sends (Connect answers them with 500).
		{"PATCH", "/connectors/c/offsets", `[]`, `Invalid request body: expected a JSON object with "offsets", not an array`},
		{"PATCH", "/connectors/c/offsets", `{"key":[]}`, `Invalid request body: Unrecognized field "key" (known fields: "offsets")`},
		{"PATCH", "/connectors/c/offsets", `{"offsets":{}}`, `Invalid request body: "offsets" must be an array of {"partition":{...},"offset":{...}} objects, not an object`},
		{"PATCH", "/connectors/c/offsets", `{"offsets":[1]}`, `Invalid request body: "offsets[0]" must be an object with "partition" and "offset", not a number`},
		{"PATCH", "/connectors/c/offsets", `{"offsets":[{"partition":"p"}]}`, `Invalid request body: "offsets[0].partition" must be an object or null, not a string`},
		{"PATCH", "/connectors/c/offsets", `{"offsets":[{"partition":{},"offsets":{}}]}`, `Invalid request body: Unrecognized field "offsets" in "offsets[0]" (known fields: "partition", "offset")`},
		{"PUT", "/admin/loggers/root", ``, `Invalid request body: the body is empty; expected a JSON object of configuration properties`},
	} {
		requireError(t, f.do(tc.method, tc.path, tc.body), http.StatusBadRequest, tc.message)
	}
	// None of it changed anything.
	names, err := f.store.ListConnectorNames(t.Context())
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, names)
	require.Equal(t, "c", f.connector("c").Config["name"])
	require.Len(t, f.connector("c").Config, 6)
}

func TestTrailingSlashIsTolerated(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	// kcctl lists with GET /connectors/ and creates with POST /connectors/.
	requireJSON(t, f.do("GET", "/connectors/", ""), http.StatusOK, `[]`)
	r := f.do("POST", "/connectors/", jsonText(t, map[string]any{"name": "c", "config": sourceConfig()}))
	require.Equal(t, http.StatusCreated, r.status, r.body)
	require.Equal(t, http.StatusOK, f.do("GET", "/connectors/c/", "").status)
	require.Equal(t, http.StatusOK, f.do("GET", "/connectors/c/config/", "").status)
	requireEmpty(t, f.do("PUT", "/connectors/c/pause/", ""), http.StatusAccepted)
	require.Equal(t, http.StatusOK, f.do("GET", "/connector-plugins/", "").status)
	require.Equal(t, http.StatusOK, f.do("GET", "/admin/loggers/", "").status)
}

func TestHeadAndForward(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.do("HEAD", "/connectors", "")
	require.Equal(t, http.StatusOK, r.status)
	require.Empty(t, r.body)
	// The forward parameter of Connect's request forwarding is accepted and ignored.
	r = f.do("POST", "/connectors?forward=true", jsonText(t, map[string]any{"name": "c", "config": sourceConfig()}))
	require.Equal(t, http.StatusCreated, r.status, r.body)
	requireEmpty(t, f.do("PUT", "/connectors/c/stop?forward=false", ""), http.StatusNoContent)
}
