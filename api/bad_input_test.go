package api_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// Issue 14, item 6: bad input never reaches the database raw. PostgreSQL's text and jsonb hold neither NUL nor
// invalid UTF-8, so a request carrying them, in any path parameter or body of any route, must get a 400 that
// names the field before the store sees it, rather than the 500 the database's refusal would cause. The tests
// walk api.Routes(), so a new route is covered (or fails here until its body is described) without anyone
// remembering to add it.

// routeParam matches a chi path parameter.
var routeParam = regexp.MustCompile(`\{([a-z]+)\}`)

// validParams are path parameter values the fixture's resources answer to: the connector routes reach their
// checks on later parameters only for a connector that exists and is of the right class.
func validParams(pattern string) map[string]string {
	connector := "src"
	if strings.Contains(pattern, "/groups") {
		connector = "ckpt"
	}
	return map[string]string{"connector": connector, "group": "g1", "task": "0", "plugin": "MirrorSourceConnector",
		"logger": "org.apache.kafka"}
}

// pathFor fills a route pattern: bad (already escaped) for the parameter named bad, valid values elsewhere.
func pathFor(pattern, badParam, bad string) string {
	valid := validParams(pattern)
	return routeParam.ReplaceAllStringFunc(pattern, func(m string) string {
		name := m[1 : len(m)-1]
		if name == badParam {
			return bad
		}
		return url.PathEscape(valid[name])
	})
}

// goodBodies are valid bodies of the routes that read one. Each is mutated below.
var goodBodies = map[string]string{
	"POST /connectors": `{"name":"new","config":{"connector.class":"MirrorSourceConnector","source.cluster.alias":"A",` +
		`"target.cluster.alias":"B","source.cluster.bootstrap.servers":"a:9092","target.cluster.bootstrap.servers":"b:9092"}}`,
	"PUT /connectors/{connector}/config": `{"connector.class":"MirrorSourceConnector","source.cluster.alias":"A",` +
		`"target.cluster.alias":"B","source.cluster.bootstrap.servers":"a:9092","target.cluster.bootstrap.servers":"b:9092"}`,
	"PATCH /connectors/{connector}/config":              `{"topics":"orders"}`,
	"PUT /connector-plugins/{plugin}/config/validate":   `{"connector.class":"MirrorSourceConnector","topics":"orders"}`,
	"PUT /admin/loggers/{logger}":                       `{"level":"DEBUG"}`,
	"PATCH /connectors/{connector}/offsets":             `{"offsets":[{"partition":{"cluster":"A","topic":"orders","partition":0},"offset":{"offset":1}}]}`,
	"POST /connectors/{connector}/restart":              "",
	"POST /connectors/{connector}/tasks/{task}/restart": "",
	"PUT /connectors/{connector}/pause":                 "",
	"PUT /connectors/{connector}/resume":                "",
	"PUT /connectors/{connector}/stop":                  "",
	"PUT /connectors/{connector}/topics/reset":          "",
	"POST /connectors/{connector}/failover":             `{"drain_timeout_ms":0,"checkpoint_connector":"cp"}`,
	"POST /connectors/{connector}/failback":             `{"drain_timeout_ms":0,"failover_of":"ab"}`,
}

// badBodies derives the bodies with a NUL or invalid UTF-8 from a good one: in the first member's key, in the
// last string value (whatever its depth), and as raw bytes. want is a fragment the 400's message must have: the
// field's name (a NUL in a key of an envelope such as POST /connectors' is an unknown field, named as such).
func badBodies(good string) []struct{ name, body, want string } {
	firstKey := regexp.MustCompile(`"([a-z_.]+)":`)
	lastString := regexp.MustCompile(`:"([^"]*)"`)
	key := firstKey.FindStringSubmatch(good)[1]
	valueAt := lastString.FindAllStringSubmatchIndex(good, -1)
	last := valueAt[len(valueAt)-1]
	valueKey := firstKey.FindAllStringSubmatch(good[:last[0]+1], -1)
	inValue := func(insert string) string { return good[:last[3]] + insert + good[last[3]:] }
	return []struct{ name, body, want string }{
		{"NUL in a key", strings.Replace(good, `"`+key+`"`, `"`+key+`\u0000x"`, 1), key},
		{"NUL in a value", inValue(`\u0000`), "NUL"},
		{"NUL in a value, name", inValue(`\u0000`), valueKey[len(valueKey)-1][1]},
		{"invalid UTF-8 in a value", inValue("\xff"), "not valid UTF-8"},
		{"invalid UTF-8 in a value, name", inValue("\xff"), valueKey[len(valueKey)-1][1] + `"`},
		{"invalid UTF-8 in a key", strings.Replace(good, `"`+key+`"`, "\""+key+"\xc3\x28\"", 1), "not valid UTF-8"},
		{"invalid UTF-8 in a key, name", strings.Replace(good, `"`+key+`"`, "\""+key+"\xc3\x28\"", 1), `in the key "` + key + `?(`},
	}
}

func TestBadInputNeverReachesTheDatabase(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create("src", sourceConfig())
	f.create("ckpt", checkpointConfig())
	require.Equal(t, http.StatusNoContent, f.do("PUT", "/connectors/src/stop", "").status, "offsets can be altered")
	before := f.do("GET", "/connectors?expand=info", "")
	levelsBefore := f.loggers.Levels()

	covered := map[string]bool{}
	for _, rt := range api.Routes() {
		route := rt.Method + " " + rt.Pattern
		for _, m := range routeParam.FindAllStringSubmatch(rt.Pattern, -1) {
			param := m[1]
			for _, bad := range []struct{ name, escaped, want string }{
				{"NUL", "a%00b", "The " + param + " in the path contains a NUL character (%00)"},
				{"invalid UTF-8", "a%FFb", "The " + param + " in the path is not valid UTF-8"},
			} {
				t.Run(route+"/"+param+" with "+bad.name, func(t *testing.T) {
					r := f.do(rt.Method, pathFor(rt.Pattern, param, bad.escaped), goodBodies[route])
					if param == "task" && r.status == http.StatusNotFound {
						return // {task} is Jersey's Integer: anything but digits matches no resource, as in Connect
					}
					requireError(t, r, http.StatusBadRequest, errorMessage(t, r))
					require.Contains(t, errorMessage(t, r), bad.want)
				})
			}
		}
		switch rt.Method {
		case http.MethodGet, http.MethodDelete, http.MethodHead:
			continue
		}
		good, ok := goodBodies[route]
		require.True(t, ok, "route %s takes a body: describe a valid one in goodBodies", route)
		covered[route] = true
		if good == "" {
			continue // the route reads no body
		}
		for _, bad := range badBodies(good) {
			t.Run(route+" "+bad.name, func(t *testing.T) {
				r := f.do(rt.Method, pathFor(rt.Pattern, "", ""), bad.body)
				msg := errorMessage(t, r)
				requireError(t, r, http.StatusBadRequest, msg)
				require.Contains(t, msg, bad.want, "body %q", bad.body)
			})
		}
	}
	for route := range goodBodies {
		require.True(t, covered[route], "goodBodies describes %s, which is not a route", route)
	}

	// Nothing changed: no connector created, renamed or reconfigured, no logger set.
	requireJSON(t, f.do("GET", "/connectors?expand=info", ""), http.StatusOK, before.body)
	require.Equal(t, levelsBefore, f.loggers.Levels(), "no logger level was set")
}

// errorMessage returns the message of an error body, failing the test if the body is not one.
func errorMessage(t *testing.T, r reply) string {
	t.Helper()
	var body struct {
		Code    int    `json:"error_code"`
		Message string `json:"message"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.body), &body), "status %d, body %q", r.status, r.body)
	return body.Message
}

// TestOversizedValuesAreNotDatabaseErrors: values PostgreSQL refuses for their size (a btree index entry holds
// at most about 2.7 kB; a connector name, logger name and offsets partition are all primary keys) must not
// come back as a 500, let alone with the database's text: kmirror refuses them first, naming the field. Random hex does not compress, so the index really sees it at full length.
func TestOversizedValuesAreNotDatabaseErrors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create("src", sourceConfig())
	require.Equal(t, http.StatusNoContent, f.do("PUT", "/connectors/src/stop", "").status)
	huge := randomHex(t, 8000)
	for _, tc := range []struct {
		method, path, body string
		status             int
		want               string // in the message
	}{
		{"POST", "/connectors", jsonText(t, map[string]any{"name": huge, "config": sourceConfig()}), http.StatusBadRequest,
			"Connector name is 8000 bytes long; kmirror accepts names of at most 1024 bytes"},
		{"PUT", "/connectors/" + huge + "/config", jsonText(t, sourceConfig()), http.StatusBadRequest,
			"Connector name is 8000 bytes long; kmirror accepts names of at most 1024 bytes"},
		{"GET", "/connectors/" + huge, "", http.StatusNotFound, "not found"},
		{"DELETE", "/connectors/" + huge, "", http.StatusNotFound, "not found"},
		{"PUT", "/admin/loggers/" + huge + "?scope=cluster", `{"level":"DEBUG"}`, http.StatusBadRequest,
			"Logger name is 8000 bytes long; kmirror accepts names of at most 1024 bytes"},
		{"PATCH", "/connectors/src/offsets", jsonText(t, map[string]any{"offsets": []any{map[string]any{
			"partition": map[string]any{"cluster": "A", "topic": huge, "partition": 0}, "offset": map[string]any{"offset": 1}}}}),
			http.StatusBadRequest, `"offsets[0].partition" is 8040 bytes as JSON; kmirror stores partitions of at most 1024 bytes`},
		// A config is one jsonb value, with no index on its contents: a long key or value is stored as any other.
		{"PATCH", "/connectors/src/config", jsonText(t, map[string]any{huge: huge}), http.StatusOK, ""},
	} {
		r := f.do(tc.method, tc.path, tc.body)
		msg := errorMessageOrEmpty(r)
		assert.Equal(t, tc.status, r.status, "%s %.60s...: %s", tc.method, tc.path, msg)
		assert.Contains(t, msg, tc.want, "%s %.60s...", tc.method, tc.path)
		requireNoLeak(t, r, "index row", "btree", "SQLSTATE", "postgres", "kmirror_test_")
	}
}

// errorMessageOrEmpty is the message of an error body, or "" for any other body.
func errorMessageOrEmpty(r reply) string {
	var body struct {
		Message string `json:"message"`
	}
	_ = json.Unmarshal([]byte(r.body), &body)
	return body.Message
}

func randomHex(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n/2)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return hex.EncodeToString(b)
}

// TestQueryFailureIsGeneric: with PostgreSQL up but a query failing for real (here every table the requests
// read is gone, as after a botched manual migration), the client gets the generic 500 naming its request, and
// nothing of PostgreSQL's text: no relation, SQLSTATE, user, database, host or port.
func TestQueryFailureIsGeneric(t *testing.T) {
	t.Parallel()
	dbURL := storetest.NewURL(t)
	st, err := store.Open(context.Background(), dbURL, slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	t.Cleanup(st.Close)
	srv := httptest.NewServer(api.New(api.Config{Store: st, Logger: slog.New(slog.DiscardHandler)}))
	t.Cleanup(srv.Close)
	f := &fixture{t: t, store: st, url: srv.URL}
	f.create("mm2", sourceConfig())

	conn, err := pgx.Connect(context.Background(), dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), "ALTER TABLE connectors RENAME TO connectors_renamed_by_test")
	require.NoError(t, err)

	u, err := url.Parse(dbURL)
	require.NoError(t, err)
	secrets := []string{"connectors_renamed_by_test", `relation`, "SQLSTATE", "42P01", u.User.Username(), u.Hostname(), u.Port(),
		strings.TrimPrefix(u.Path, "/")}
	for _, req := range [][2]string{{"GET", "/connectors"}, {"GET", "/connectors/mm2"}, {"GET", "/connectors/mm2/config"},
		{"PUT", "/connectors/mm2/pause"}, {"DELETE", "/connectors/mm2"}} {
		r := f.do(req[0], req[1], "")
		requireError(t, r, http.StatusInternalServerError,
			"Internal server error while handling "+req[0]+" "+req[1]+"; see the worker's log")
		requireNoLeak(t, r, secrets...)
	}
}

// TestNamesWithInvisibleCharactersAreRefused: a right-to-left override or a zero-width character makes one
// connector's name look like another's on a page or in a log; such a name is refused with a 400 naming the
// character, and nothing is created.
func TestNamesWithInvisibleCharactersAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, tc := range []struct{ name, code string }{
		{"mirror-\u202eeu-us", "U+202E"}, // RIGHT-TO-LEFT OVERRIDE
		{"mirror\u200b-eu", "U+200B"},    // ZERO WIDTH SPACE
		{"mirror\u200d-eu", "U+200D"},    // ZERO WIDTH JOINER
		{"\u2066mirror\u2069", "U+2066"}, // LEFT-TO-RIGHT ISOLATE
		{"mirror\ufeff", "U+FEFF"},       // ZERO WIDTH NO-BREAK SPACE
	} {
		r := f.do("POST", "/connectors", jsonText(t, map[string]any{"name": tc.name, "config": sourceConfig()}))
		require.Equal(t, http.StatusBadRequest, r.status, "%q", tc.name)
		require.Contains(t, errorMessageOrEmpty(r), "Connector name holds "+tc.code+", an invisible formatting character")
		r = f.do("PUT", "/connectors/"+url.PathEscape(tc.name)+"/config", jsonText(t, sourceConfig()))
		require.Equal(t, http.StatusBadRequest, r.status, "%q", tc.name)
		require.Contains(t, errorMessageOrEmpty(r), tc.code)
	}
	r := f.do("GET", "/connectors", "")
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, "[]", strings.TrimSpace(r.body), "nothing was created")
	f.create("mirror-eu→us ✓", sourceConfig()) // visible non-ASCII is fine
}
