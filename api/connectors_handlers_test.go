package api_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
)

const sourceClass = "org.apache.kafka.connect.mirror.MirrorSourceConnector"

func TestCreateConnector(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.do("POST", "/connectors", `{"name":"c1","config":{"connector.class":"MirrorSource","source.cluster.alias":"A","target.cluster.alias":"B",`+
		`"source.cluster.bootstrap.servers":"a:9092","target.cluster.bootstrap.servers":"b:9092","tasks.max":2,"emit.heartbeats.enabled":false,"x":"<&>"}}`)
	requireJSON(t, r, http.StatusCreated, `{"name":"c1","config":{"connector.class":"MirrorSource","emit.heartbeats.enabled":"false","name":"c1",`+
		`"source.cluster.alias":"A","source.cluster.bootstrap.servers":"a:9092","target.cluster.alias":"B","target.cluster.bootstrap.servers":"b:9092",`+
		`"tasks.max":"2","x":"<&>"},"tasks":[],"type":"source"}`)
	require.Equal(t, f.url+"/connectors/c1", r.header.Get("Location"))

	c := f.connector("c1")
	require.Equal(t, store.TargetStarted, c.TargetState)
	require.Equal(t, "2", c.Config["tasks.max"], "JSON numbers are stored as text")
	require.Equal(t, "false", c.Config["emit.heartbeats.enabled"], "JSON booleans are stored as text")
	require.Equal(t, "c1", c.Config["name"], "name is added to the config")

	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "c1", "config": sourceConfig()})),
		http.StatusConflict, "Connector c1 already exists")
}

func TestCreateConnectorInitialState(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, want := range map[string]store.TargetState{"running": store.TargetStarted, "Paused": store.TargetPaused, "STOPPED": store.TargetStopped} {
		r := f.do("POST", "/connectors", jsonText(t, map[string]any{"name": name, "config": sourceConfig(), "initial_state": name}))
		require.Equal(t, http.StatusCreated, r.status, r.body)
		require.Equal(t, want, f.connector(name).TargetState)
	}
	r := f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "default", "config": sourceConfig(), "initial_state": nil}))
	require.Equal(t, http.StatusCreated, r.status, r.body)
	require.Equal(t, store.TargetStarted, f.connector("default").TargetState)
}

func TestCreateConnectorNames(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	// POST trims the name as Java's String.trim does, control characters included.
	r := f.do("POST", "/connectors", jsonText(t, map[string]any{"name": " \t padded\b ", "config": sourceConfig()}))
	require.Equal(t, http.StatusCreated, r.status, r.body)
	require.Equal(t, "padded", f.connector("padded").Config["name"])

	// A name in the config must equal the trimmed name; it is not trimmed itself.
	cfg := sourceConfig()
	cfg["name"] = " other "
	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "other", "config": cfg})),
		http.StatusBadRequest, "Connector name configuration ( other ) doesn't match connector name in the URL (other)")

	// An empty name, or one with control characters inside, fails validation.
	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "   \t\n  \b", "config": sourceConfig()})),
		http.StatusBadRequest, "Connector configuration is invalid and contains the following 1 error(s):\n"+
			"Invalid value  for configuration name: String may not be empty\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"config": sourceConfig()})),
		http.StatusBadRequest, "Connector configuration is invalid and contains the following 1 error(s):\n"+
			"Invalid value  for configuration name: String may not be empty\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "a\nb", "config": sourceConfig()})),
		http.StatusBadRequest, "Connector configuration is invalid and contains the following 1 error(s):\n"+
			"Invalid value a\nb for configuration name: String may not contain control sequences but had the following ASCII chars: 10\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")

	names, err := f.store.ListConnectorNames(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"padded"}, names, "rejected requests leave no trace")
}

func TestCreateConnectorInvalidConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	cfg := sourceConfig()
	cfg["tasks.max"] = "0"
	delete(cfg, "source.cluster.alias")
	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "c", "config": cfg})), http.StatusBadRequest,
		"Connector configuration is invalid and contains the following 2 error(s):\n"+
			"Invalid value 0 for configuration tasks.max: Value must be at least 1\n"+
			"Missing required configuration \"source.cluster.alias\" which has no default value.\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")

	// No connector.class: Connect prints the config as the HashMap it validates.
	requireError(t, f.do("POST", "/connectors", `{"name":"my-connector","config":{"tasks.max":"1","topics":"orders","source.cluster.alias":"A","foo":null}}`),
		http.StatusBadRequest, "Connector config {source.cluster.alias=A, name=my-connector, tasks.max=1, topics=orders, foo=null} contains no connector type")

	// An unknown class: Connect's text (with a 400 where Connect says 500), which kcctl recognises by its prefix.
	cfg = withClass(sourceConfig(), "io.confluent.connect.jdbc.JdbcSourceConnector")
	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "c", "config": cfg})), http.StatusBadRequest,
		"Failed to find any class that implements Connector and which name matches io.confluent.connect.jdbc.JdbcSourceConnector, available connectors are: "+
			"PluginDesc{klass=class org.apache.kafka.connect.mirror.MirrorCheckpointConnector, name='org.apache.kafka.connect.mirror.MirrorCheckpointConnector', version='4.1.1', encodedVersion=4.1.1, type=source, typeName='source', location='classpath'}, "+
			"PluginDesc{klass=class org.apache.kafka.connect.mirror.MirrorHeartbeatConnector, name='org.apache.kafka.connect.mirror.MirrorHeartbeatConnector', version='4.1.1', encodedVersion=4.1.1, type=source, typeName='source', location='classpath'}, "+
			"PluginDesc{klass=class org.apache.kafka.connect.mirror.MirrorSourceConnector, name='org.apache.kafka.connect.mirror.MirrorSourceConnector', version='4.1.1', encodedVersion=4.1.1, type=source, typeName='source', location='classpath'}")

	// A null value is a validation error on create.
	requireError(t, f.do("POST", "/connectors", `{"name":"c","config":{"connector.class":"MirrorHeartbeat","source.cluster.alias":"A","target.cluster.alias":"B",`+
		`"source.cluster.bootstrap.servers":"a:9092","target.cluster.bootstrap.servers":"b:9092","foo":null}}`), http.StatusBadRequest,
		"Connector configuration is invalid and contains the following 1 error(s):\n"+
			"Null value can not be supplied as the configuration value.\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")

	names, err := f.store.ListConnectorNames(context.Background())
	require.NoError(t, err)
	require.Empty(t, names)

	// Validation comes before the existence check, as in Connect.
	f.create("c", sourceConfig())
	cfg = sourceConfig()
	cfg["tasks.max"] = "x"
	r := f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "c", "config": cfg}))
	require.Equal(t, http.StatusBadRequest, r.status, r.body)
}

func TestGetConnectorAndConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("GET", "/connectors/c", ""), http.StatusNotFound, "Connector c not found")
	requireError(t, f.do("GET", "/connectors/c/config", ""), http.StatusNotFound, "Connector c not found")

	f.create("c", sourceConfig())
	requireJSON(t, f.do("GET", "/connectors/c", ""), http.StatusOK, `{"name":"c","config":{"connector.class":"`+sourceClass+`","name":"c",`+
		`"source.cluster.alias":"A","source.cluster.bootstrap.servers":"a:9092","target.cluster.alias":"B","target.cluster.bootstrap.servers":"b:9092"},"tasks":[],"type":"source"}`)
	requireJSON(t, f.do("GET", "/connectors/c/config", ""), http.StatusOK, `{"connector.class":"`+sourceClass+`","name":"c",`+
		`"source.cluster.alias":"A","source.cluster.bootstrap.servers":"a:9092","target.cluster.alias":"B","target.cluster.bootstrap.servers":"b:9092"}`)

	f.setTasks("c", 2)
	r := f.do("GET", "/connectors/c", "")
	require.Equal(t, http.StatusOK, r.status)
	require.Contains(t, r.body, `"tasks":[{"connector":"c","task":0},{"connector":"c","task":1}],"type":"source"}`)
}

func TestPutConnectorConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	r := f.do("PUT", "/connectors/c/config", jsonText(t, sourceConfig()))
	requireJSON(t, r, http.StatusCreated, `{"name":"c","config":{"connector.class":"`+sourceClass+`","name":"c",`+
		`"source.cluster.alias":"A","source.cluster.bootstrap.servers":"a:9092","target.cluster.alias":"B","target.cluster.bootstrap.servers":"b:9092"},"tasks":[],"type":"source"}`)
	require.Equal(t, f.url+"/connectors/c", r.header.Get("Location"))
	require.Equal(t, store.TargetStarted, f.connector("c").TargetState)

	// A replace keeps the target state and answers with the current tasks.
	requireEmpty(t, f.do("PUT", "/connectors/c/pause", ""), http.StatusAccepted)
	f.setTasks("c", 1)
	cfg := sourceConfig()
	cfg["name"] = "c"
	cfg["tasks.max"] = "4"
	r = f.do("PUT", "/connectors/c/config", jsonText(t, cfg))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.Empty(t, r.header.Get("Location"))
	require.Contains(t, r.body, `"tasks":[{"connector":"c","task":0}]`)
	c := f.connector("c")
	require.Equal(t, store.TargetPaused, c.TargetState)
	require.Equal(t, cfg, c.Config)

	// GET config echoes exactly what was PUT, plus name (what Terraform providers compare).
	requireJSON(t, f.do("GET", "/connectors/c/config", ""), http.StatusOK, jsonText(t, cfg))

	requireError(t, f.do("PUT", "/connectors/c/config", `{"name":"d"}`), http.StatusBadRequest,
		"Connector name configuration (d) doesn't match connector name in the URL (c)")
	bad := sourceConfig()
	bad["tasks.max"] = "0"
	r = f.do("PUT", "/connectors/c/config", jsonText(t, bad))
	require.Equal(t, http.StatusBadRequest, r.status, r.body)
	require.Equal(t, cfg, f.connector("c").Config, "a rejected PUT leaves no trace")

	// The path name is not trimmed.
	r = f.do("PUT", "/connectors/%20spaced%20/config", jsonText(t, sourceConfig()))
	require.Equal(t, http.StatusCreated, r.status, r.body)
	require.Equal(t, " spaced ", f.connector(" spaced ").Config["name"])
	require.Equal(t, f.url+"/connectors/%20spaced%20", r.header.Get("Location"))
}

func TestPatchConnectorConfig(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("PATCH", "/connectors/c/config", `{"tasks.max":"2"}`), http.StatusNotFound, "Connector c not found")

	cfg := sourceConfig()
	cfg["topics"] = "orders"
	f.create("c", cfg)
	requireEmpty(t, f.do("PUT", "/connectors/c/stop", ""), http.StatusNoContent)
	r := f.do("PATCH", "/connectors/c/config", `{"tasks.max":3,"topics":null,"absent":null}`)
	requireJSON(t, r, http.StatusOK, `{"name":"c","config":{"connector.class":"`+sourceClass+`","name":"c",`+
		`"source.cluster.alias":"A","source.cluster.bootstrap.servers":"a:9092","target.cluster.alias":"B","target.cluster.bootstrap.servers":"b:9092",`+
		`"tasks.max":"3"},"tasks":[],"type":"source"}`)
	c := f.connector("c")
	require.NotContains(t, c.Config, "topics", "null removes a key")
	require.Equal(t, "3", c.Config["tasks.max"])
	require.Equal(t, store.TargetStopped, c.TargetState, "PATCH keeps the target state")

	// The merged config is validated; a rejected patch changes nothing.
	requireError(t, f.do("PATCH", "/connectors/c/config", `{"tasks.max":"0"}`), http.StatusBadRequest,
		"Connector configuration is invalid and contains the following 1 error(s):\n"+
			"Invalid value 0 for configuration tasks.max: Value must be at least 1\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	r = f.do("PATCH", "/connectors/c/config", `{"connector.class":null}`)
	require.Equal(t, http.StatusBadRequest, r.status, r.body)
	require.Contains(t, r.body, "contains no connector type")
	require.Equal(t, c.Config, f.connector("c").Config)
}

func TestDeleteConnector(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireError(t, f.do("DELETE", "/connectors/c", ""), http.StatusNotFound, "Connector c not found")
	f.create("c", sourceConfig())
	requireEmpty(t, f.do("DELETE", "/connectors/c", ""), http.StatusNoContent)
	requireError(t, f.do("GET", "/connectors/c", ""), http.StatusNotFound, "Connector c not found")
	requireError(t, f.do("DELETE", "/connectors/c", ""), http.StatusNotFound, "Connector c not found")
}

func TestPauseResumeStop(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, path := range []string{"pause", "resume", "stop"} {
		requireError(t, f.do("PUT", "/connectors/c/"+path, ""), http.StatusNotFound, "Unknown connector c")
	}
	f.create("c", sourceConfig())
	for _, tc := range []struct {
		path   string
		status int
		want   store.TargetState
	}{
		{"pause", http.StatusAccepted, store.TargetPaused},
		{"pause", http.StatusAccepted, store.TargetPaused},
		{"resume", http.StatusAccepted, store.TargetStarted},
		{"stop", http.StatusNoContent, store.TargetStopped},
		{"stop", http.StatusNoContent, store.TargetStopped},
		{"resume", http.StatusAccepted, store.TargetStarted},
	} {
		requireEmpty(t, f.do("PUT", "/connectors/c/"+tc.path, ""), tc.status)
		require.Equal(t, tc.want, f.connector("c").TargetState, tc.path)
	}
}

func TestNamesWithSlashesAndPercents(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, tc := range []struct{ name, escaped string }{
		{"a/b", "a%2Fb"},
		{"50%off", "50%25off"},
		{"x y?z#", "x%20y%3Fz%23"},
		{"ta/b&c=d//x=1þ.1><", "ta%2Fb&c=d%2F%2Fx=1%C3%BE.1%3E%3C"},
	} {
		r := f.do("POST", "/connectors", jsonText(t, map[string]any{"name": tc.name, "config": sourceConfig()}))
		require.Equal(t, http.StatusCreated, r.status, r.body)
		require.Equal(t, f.url+"/connectors/"+tc.escaped, r.header.Get("Location"))

		r = f.do("GET", "/connectors/"+tc.escaped, "")
		require.Equal(t, http.StatusOK, r.status, "%s: %s", tc.name, r.body)
		require.Equal(t, tc.name, decode[map[string]any](t, r)["name"])
		r = f.do("GET", "/connectors/"+tc.escaped+"/config", "")
		require.Equal(t, tc.name, decode[map[string]string](t, r)["name"])
		requireEmpty(t, f.do("PUT", "/connectors/"+tc.escaped+"/pause", ""), http.StatusAccepted)
		require.Equal(t, store.TargetPaused, f.connector(tc.name).TargetState)
		requireEmpty(t, f.do("DELETE", "/connectors/"+tc.escaped, ""), http.StatusNoContent)
	}
	requireError(t, f.do("GET", "/connectors/a%2Fb", ""), http.StatusNotFound, "Connector a/b not found")
}

func TestListConnectors(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireJSON(t, f.do("GET", "/connectors", ""), http.StatusOK, `[]`)
	requireJSON(t, f.do("GET", "/connectors?expand=status", ""), http.StatusOK, `{}`)

	f.create("b", sourceConfig())
	f.create("a", withClass(sourceConfig(), "MirrorHeartbeatConnector"))
	requireJSON(t, f.do("GET", "/connectors", ""), http.StatusOK, `["a","b"]`)

	// Unknown expansions are ignored.
	requireJSON(t, f.do("GET", "/connectors?expand=foo", ""), http.StatusOK, `{"a":{},"b":{}}`)
	requireJSON(t, f.do("GET", "/connectors?expand", ""), http.StatusOK, `{"a":{},"b":{}}`)

	// Connectors without a status are left out when status is asked for, even with info.
	f.setStatus("b", store.StateRunning, store.StateRunning)
	requireJSON(t, f.do("GET", "/connectors?expand=status", ""), http.StatusOK,
		`{"b":{"status":{"name":"b","connector":{"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"}],"type":"source"}}}`)
	r := f.do("GET", "/connectors?expand=info&expand=status", "")
	requireJSON(t, r, http.StatusOK,
		`{"b":{"info":{"name":"b","config":{"connector.class":"`+sourceClass+`","name":"b","source.cluster.alias":"A","source.cluster.bootstrap.servers":"a:9092",`+
			`"target.cluster.alias":"B","target.cluster.bootstrap.servers":"b:9092"},"tasks":[{"connector":"b","task":0}],"type":"source"},`+
			`"status":{"name":"b","connector":{"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"},"tasks":[{"id":0,"state":"RUNNING","worker_id":"10.0.0.5:8083","version":"4.1.1"}],"type":"source"}}}`)

	r = f.do("GET", "/connectors?expand=info", "")
	got := decode[map[string]map[string]map[string]any](t, r)
	require.Len(t, got, 2)
	require.Equal(t, "a", got["a"]["info"]["name"])
	require.Equal(t, "source", got["a"]["info"]["type"])
}

// TestDotNamesAreRejected: Connect accepts "." and ".." as connector names, but clients resolve those path
// segments (/connectors/.. is /, a 405), so such a connector could never be deleted. kmirror rejects them at
// create and in validation, saying why; nothing is stored.
func TestDotNamesAreRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, name := range []string{".", ".."} {
		invalid := "Connector configuration is invalid and contains the following 1 error(s):\n" +
			"Invalid value " + name + ` for configuration name: a connector name cannot be "." or "..": clients resolve such a path segment ` +
			"(/connectors/.. is /), so the connector could not be read, changed or deleted through the REST API\n" +
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`"
		requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": name, "config": sourceConfig()})), http.StatusBadRequest, invalid)
		escaped := strings.ReplaceAll(name, ".", "%2E")
		requireError(t, f.do("PUT", "/connectors/"+escaped+"/config", jsonText(t, sourceConfig())), http.StatusBadRequest, invalid)
		_, err := f.store.GetConnector(context.Background(), name)
		require.ErrorIs(t, err, store.ErrNotFound, "a rejected create leaves no trace")

		cfg := sourceConfig()
		cfg["name"] = name
		r := f.do("PUT", "/connector-plugins/MirrorSource/config/validate", jsonText(t, cfg))
		require.Equal(t, http.StatusOK, r.status, r.body)
		require.Contains(t, r.body, `"errors":["Invalid value `+name+` for configuration name: a connector name cannot be`)
	}
	// Names that merely contain dots, or dot segments inside one escaped segment, are fine.
	f.create("a..b", sourceConfig())
	f.create("../x", sourceConfig())
	requireJSON(t, f.do("GET", "/connectors/..%2Fx/config", ""), http.StatusOK, jsonText(t, withName(sourceConfig(), "../x")))
}

// TestMissingBootstrapServersIsRejected is a deliberate difference: Connect 4.1.1 validates
// {"connector.class":"MirrorSourceConnector","source.cluster.alias":"a","target.cluster.alias":"b"} with no
// errors and creates the connector (201), which then fails. kmirror's clients cannot reach a cluster without
// its brokers, so validation reports each missing *.cluster.bootstrap.servers (as entries without a definition,
// since MM2 defines no such key) and a create or config update is refused with them, storing nothing.
func TestMissingBootstrapServersIsRejected(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	cfg := map[string]string{"connector.class": "MirrorSourceConnector", "source.cluster.alias": "a", "target.cluster.alias": "b"}
	const missing = "missing: every client needs the brokers to bootstrap from"
	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": "c", "config": cfg})), http.StatusBadRequest,
		"Connector configuration is invalid and contains the following 2 error(s):\n"+
			"source.cluster.bootstrap.servers: "+missing+"\ntarget.cluster.bootstrap.servers: "+missing+"\n"+
			"You can also find the above list of errors at the endpoint `/connector-plugins/{connectorType}/config/validate`")
	_, err := f.store.GetConnector(context.Background(), "c")
	require.ErrorIs(t, err, store.ErrNotFound)

	cfg["name"] = "c"
	infos := decode[struct {
		ErrorCount int `json:"error_count"`
		Configs    []struct {
			Definition *struct{} `json:"definition"`
			Value      struct {
				Name   string   `json:"name"`
				Errors []string `json:"errors"`
			} `json:"value"`
		} `json:"configs"`
	}](t, f.do("PUT", "/connector-plugins/MirrorSourceConnector/config/validate", jsonText(t, cfg)))
	require.Equal(t, 2, infos.ErrorCount)
	var withErrors []string
	for _, c := range infos.Configs {
		if len(c.Value.Errors) > 0 {
			require.Nil(t, c.Definition, "%s has no definition in MM2", c.Value.Name)
			withErrors = append(withErrors, c.Value.Name+": "+strings.Join(c.Value.Errors, "; "))
		}
	}
	require.Equal(t, []string{
		"source.cluster.bootstrap.servers: source.cluster.bootstrap.servers: " + missing,
		"target.cluster.bootstrap.servers: target.cluster.bootstrap.servers: " + missing,
	}, withErrors)
}

// TestNULIsRefusedAndLeavesNoTrace: a NUL character cannot be stored (PostgreSQL's text cannot hold one), so a
// name, key or value with one gets a 400 that says so, before anything reaches the database; nothing changes.
// Invalid UTF-8 likewise (PostgreSQL refuses it; Go's JSON decoder would silently replace it).
func TestNULIsRefusedAndLeavesNoTrace(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.create("nul", sourceConfig())
	before := f.do("GET", "/connectors/nul/config", "")
	require.Equal(t, http.StatusOK, before.status)

	withKey := sourceConfig()
	withKey["bad\x00key"] = "1"
	withValue := sourceConfig()
	withValue["topics"] = "orders\x00"
	for _, tc := range []struct {
		method, path, body, want string
	}{
		{"POST", "/connectors", jsonText(t, map[string]any{"name": "a\x00b", "config": sourceConfig()}),
			`Invalid request body: "name" contains a NUL character (\u0000), which no connector name can hold`},
		{"POST", "/connectors", jsonText(t, map[string]any{"name": "x", "config": withKey}),
			`Invalid request body: the key "bad\x00key" in "config" contains a NUL character (\u0000), which no configuration key can hold`},
		{"PUT", "/connectors/nul/config", jsonText(t, withValue),
			`Invalid request body: the value of "topics" contains a NUL character (\u0000), which no configuration value can hold`},
		{"PATCH", "/connectors/nul/config", `{"topics":"a\u0000"}`,
			`Invalid request body: the value of "topics" contains a NUL character (\u0000), which no configuration value can hold`},
		{"PUT", "/connector-plugins/MirrorSource/config/validate", jsonText(t, withValue),
			`Invalid request body: the value of "topics" contains a NUL character (\u0000), which no configuration value can hold`},
		{"PUT", "/connectors/a%00b/config", jsonText(t, sourceConfig()), "The connector in the path contains a NUL character (%00): no connector can have one"},
		{"GET", "/connectors/a%00b", "", "The connector in the path contains a NUL character (%00): no connector can have one"},
		{"GET", "/connectors/a%00b/status", "", "The connector in the path contains a NUL character (%00): no connector can have one"},
		{"DELETE", "/connectors/a%00b", "", "The connector in the path contains a NUL character (%00): no connector can have one"},
		{"PUT", "/admin/loggers/kmirror%00", `{"level":"DEBUG"}`, "The logger in the path contains a NUL character (%00): no logger can have one"},
		// Invalid UTF-8 is refused the same way, in a body and in a path.
		{"PUT", "/connectors/nul/config", "{\"topics\":\"a\xff\"}", `Malformed JSON in request body: not valid UTF-8 (at byte 12, in the value of "topics")`},
		{"GET", "/connectors/a%FFb", "", "The connector in the path is not valid UTF-8 once unescaped: no connector can have such a name"},
	} {
		requireError(t, f.do(tc.method, tc.path, tc.body), http.StatusBadRequest, tc.want)
	}
	requireJSON(t, f.do("GET", "/connectors/nul/config", ""), http.StatusOK, before.body)
	list := f.do("GET", "/connectors", "")
	require.JSONEq(t, `["nul"]`, list.body, "no connector was created")
}

// TestCodeLoadingConfigsAreRefused: a connector config is anyone's who reaches the REST API, so the librdkafka
// properties that load native code into kmirror's process are refused, naming the key, and nothing is stored.
func TestCodeLoadingConfigsAreRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for key, reason := range map[string]string{
		"source.cluster.ssl.engine.location":   "it loads an OpenSSL engine, a shared library, into kmirror's process",
		"target.cluster.ssl.providers":         "it loads OpenSSL providers, shared libraries, into kmirror's process",
		"source.consumer.plugin.library.paths": "it loads native plugins",
	} {
		cfg := sourceConfig()
		cfg["source.cluster.security.protocol"], cfg["target.cluster.security.protocol"] = "SSL", "SSL"
		cfg[key] = "/tmp/evil.so"
		r := f.do("PUT", "/connectors/evil/config", jsonText(t, cfg))
		require.Equal(t, http.StatusBadRequest, r.status, r.body)
		require.Contains(t, r.body, key, "the error names the key")
		require.Contains(t, r.body, reason)
		_, err := f.store.GetConnector(context.Background(), "evil")
		require.ErrorIs(t, err, store.ErrNotFound, "a rejected config leaves no trace")
	}
}

// TestValidateNeverEchoesASecret: a client secret that comes with an error is reported as Connect reports a
// Password, "[hidden]", in the validate answer and in the create's 400; the secret itself appears in neither.
func TestValidateNeverEchoesASecret(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const secret = "s3cr3t-0f-the-truststore"
	cfg := sourceConfig()
	cfg["source.cluster.security.protocol"] = "SSL"
	cfg["source.cluster.ssl.truststore.password"] = secret // without a trust store: an error
	r := f.do("PUT", "/connector-plugins/MirrorSource/config/validate", jsonText(t, cfg))
	require.Equal(t, http.StatusOK, r.status, r.body)
	require.NotContains(t, r.body, secret)
	require.Contains(t, r.body, `{"name":"source.cluster.ssl.truststore.password","value":"[hidden]"`)
	r = f.do("PUT", "/connectors/secret/config", jsonText(t, cfg))
	require.Equal(t, http.StatusBadRequest, r.status, r.body)
	require.NotContains(t, r.body, secret)
}
