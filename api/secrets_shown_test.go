package api_test

import (
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/auth"
	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// TestSecretsHiddenUnlessAnAdminAsks: every GET that returns configs shows each client secret written in the
// config as [hidden], to admins too; an admin who asks (?revealSecrets=true) reads it as stored, a read-only
// caller who asks gets 403; a config-provider reference is shown as it is, since it holds no secret.
func TestSecretsHiddenUnlessAnAdminAsks(t *testing.T) {
	st := storetest.New(t)
	srv := secretsServer(t, st)
	cfg := sourceConfig()
	cfg["target.cluster.security.protocol"] = "SASL_PLAINTEXT"
	cfg["target.cluster.sasl.mechanism"] = "PLAIN"
	cfg["target.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cret";`
	cfg["source.cluster.ssl.truststore.password"] = "${env:TRUSTSTORE_PASSWORD}"
	body, err := json.Marshal(map[string]any{"name": "c", "config": cfg})
	require.NoError(t, err)
	status, created := srv.do(t, http.MethodPost, "/connectors", "admin", string(body))
	require.Equal(t, http.StatusCreated, status, created)
	require.NotContains(t, created, "s3cret", "the create answer shows no secret either")
	f := &fixture{t: t, store: st}
	unit := store.Unit{Connector: "c", Task: store.ConnectorUnit}
	_, err = st.ReplaceTaskConfigs(t.Context(), store.Claim{Unit: unit, Epoch: f.assignAll()[unit]}, []map[string]string{cfg})
	require.NoError(t, err)

	const key = "target.cluster.sasl.jaas.config"
	for _, path := range []string{"/connectors/c/config", "/connectors/c", "/connectors/c/tasks", "/connectors/c/tasks-config", "/connectors?expand=info"} {
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		for _, role := range []string{"admin", "read-only"} {
			got := srv.config(t, path, role)
			require.Equal(t, "[hidden]", got[key], "%s as %s", path, role)
			require.Equal(t, "SASL_PLAINTEXT", got["target.cluster.security.protocol"], "%s: other keys unchanged", path)
			require.Equal(t, cfg["source.cluster.ssl.truststore.password"], got["source.cluster.ssl.truststore.password"], "%s: a reference is shown", path)
			require.Equal(t, "[hidden]", srv.config(t, path+sep+"revealSecrets=false", role)[key], "%s asking for nothing", path)
		}
		require.Equal(t, cfg[key], srv.config(t, path+sep+"revealSecrets=TRUE", "admin")[key], "%s: an admin who asks", path)
		status, msg := srv.do(t, http.MethodGet, path+sep+"revealSecrets=true", "read-only", "")
		require.Equal(t, http.StatusForbidden, status, path)
		require.Contains(t, msg, "revealSecrets=true needs the admin role")
		require.NotContains(t, msg, "s3cret")
	}
}

// TestHiddenSecretsWrittenBackKeepTheStoredValue: a client that reads a config (secrets [hidden]), changes a
// key and writes it back with PUT or PATCH keeps the stored secret; a [hidden] that stands for no stored
// secret is refused, naming the key, and changes nothing.
func TestHiddenSecretsWrittenBackKeepTheStoredValue(t *testing.T) {
	st := storetest.New(t)
	srv := secretsServer(t, st)
	const key = "target.cluster.sasl.jaas.config"
	const jaas = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cret";`
	cfg := sourceConfig()
	cfg["name"] = "c"
	cfg["target.cluster.security.protocol"] = "SASL_PLAINTEXT"
	cfg["target.cluster.sasl.mechanism"] = "PLAIN"
	cfg[key] = jaas
	put := func(name string, c map[string]string) (int, string) {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		return srv.do(t, http.MethodPut, "/connectors/"+name+"/config", "admin", string(b))
	}
	status, msg := put("c", cfg)
	require.Equal(t, http.StatusCreated, status, msg)

	// PUT of what GET showed, one key changed.
	shown := map[string]string{}
	for k, v := range srv.config(t, "/connectors/c/config", "admin") {
		shown[k] = v.(string)
	}
	require.Equal(t, "[hidden]", shown[key])
	shown["replication.factor"] = "1"
	status, msg = put("c", shown)
	require.Equal(t, http.StatusOK, status, msg)
	stored, err := st.GetConnector(t.Context(), "c")
	require.NoError(t, err)
	require.Equal(t, jaas, stored.Config[key], "PUT kept the stored secret")
	require.Equal(t, "1", stored.Config["replication.factor"])

	// PATCH with [hidden] keeps it too.
	status, msg = srv.do(t, http.MethodPatch, "/connectors/c/config", "admin", `{"`+key+`": "[hidden]", "replication.factor": "2"}`)
	require.Equal(t, http.StatusOK, status, msg)
	stored, err = st.GetConnector(t.Context(), "c")
	require.NoError(t, err)
	require.Equal(t, jaas, stored.Config[key], "PATCH kept the stored secret")
	require.Equal(t, "2", stored.Config["replication.factor"])

	// [hidden] standing for nothing: a new connector by PUT or POST, or a key with no stored secret.
	fresh := maps.Clone(shown)
	fresh["name"] = "d"
	status, msg = put("d", fresh)
	require.Equal(t, http.StatusBadRequest, status, msg)
	require.Contains(t, msg, key+`: \"[hidden]\" stands for the secret stored under this key, and connector d has none stored`)
	body, err := json.Marshal(map[string]any{"name": "d", "config": fresh})
	require.NoError(t, err)
	status, msg = srv.do(t, http.MethodPost, "/connectors", "admin", string(body))
	require.Equal(t, http.StatusBadRequest, status, msg)
	_, err = st.GetConnector(t.Context(), "d")
	require.ErrorIs(t, err, store.ErrNotFound, "a refused write leaves no trace")
	status, msg = srv.do(t, http.MethodPatch, "/connectors/c/config", "admin", `{"source.cluster.sasl.jaas.config": "[hidden]"}`)
	require.Equal(t, http.StatusBadRequest, status, msg)
	require.Contains(t, msg, "source.cluster.sasl.jaas.config")
	after, err := st.GetConnector(t.Context(), "c")
	require.NoError(t, err)
	require.Equal(t, stored.Config, after.Config, "a refused PATCH changes nothing")
}

// secretsTestServer serves the API with the role named by each request's X-Test-Role header.
type secretsTestServer struct{ url string }

func secretsServer(t *testing.T, st *store.Store) secretsTestServer {
	providers, err := configprovider.New(configprovider.Config{Enabled: []string{"env"}})
	require.NoError(t, err)
	h := api.New(api.Config{Store: st, Loggers: newFakeLoggers(), Clients: clientconfig.Options{Providers: providers}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role := auth.RoleAdmin
		if r.Header.Get("X-Test-Role") == "read-only" {
			role = auth.RoleReadOnly
		}
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Name: "t", Role: role, Method: "basic"})))
	}))
	t.Cleanup(srv.Close)
	return secretsTestServer{url: srv.URL}
}

func (s secretsTestServer) do(t *testing.T, method, path, role, body string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, s.url+path, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("X-Test-Role", role)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// config GETs path and returns the config in the answer: the map itself, a ConnectorInfo's, the first task's,
// task 0 of tasks-config or connector c of ?expand=info.
func (s secretsTestServer) config(t *testing.T, path, role string) map[string]any {
	t.Helper()
	status, body := s.do(t, http.MethodGet, path, role, "")
	require.Equal(t, http.StatusOK, status, body)
	var v any
	require.NoError(t, json.Unmarshal([]byte(body), &v))
	if list, ok := v.([]any); ok {
		require.NotEmpty(t, list)
		return list[0].(map[string]any)["config"].(map[string]any)
	}
	m := v.(map[string]any)
	switch {
	case m["c-0"] != nil:
		return m["c-0"].(map[string]any)
	case m["c"] != nil:
		return m["c"].(map[string]any)["info"].(map[string]any)["config"].(map[string]any)
	case m["config"] != nil:
		return m["config"].(map[string]any)
	}
	return m
}
