package api_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/auth"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

// TestReadOnlyCallersSeeSecretsHidden: an admin reads a connector's config exactly as stored (Terraform reads
// back what it wrote), a read-only caller reads every client secret written in the config as [hidden] on each
// GET that returns configs, and a config-provider reference as it is, since it holds no secret.
func TestReadOnlyCallersSeeSecretsHidden(t *testing.T) {
	st := storetest.New(t)
	h := api.New(api.Config{Store: st, Loggers: newFakeLoggers()})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		role := auth.RoleAdmin
		if r.Header.Get("X-Test-Role") == "read-only" {
			role = auth.RoleReadOnly
		}
		h.ServeHTTP(w, r.WithContext(auth.WithPrincipal(r.Context(), auth.Principal{Name: "t", Role: role, Method: "basic"})))
	}))
	t.Cleanup(srv.Close)
	get := func(path, role string) map[string]any {
		t.Helper()
		req, err := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("X-Test-Role", role)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.Equal(t, http.StatusOK, resp.StatusCode, string(b))
		var v any
		require.NoError(t, json.Unmarshal(b, &v))
		if list, ok := v.([]any); ok { // GET .../tasks: the first task's config
			require.NotEmpty(t, list)
			return list[0].(map[string]any)["config"].(map[string]any)
		}
		return v.(map[string]any)
	}

	cfg := sourceConfig()
	cfg["target.cluster.security.protocol"] = "SASL_PLAINTEXT"
	cfg["target.cluster.sasl.mechanism"] = "PLAIN"
	cfg["target.cluster.sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="s3cret";`
	body, err := json.Marshal(map[string]any{"name": "c", "config": cfg})
	require.NoError(t, err)
	resp, err := http.Post(srv.URL+"/connectors", "application/json", strings.NewReader(string(body)))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusCreated, resp.StatusCode)
	f := &fixture{t: t, store: st}
	unit := store.Unit{Connector: "c", Task: store.ConnectorUnit}
	_, err = st.ReplaceTaskConfigs(t.Context(), store.Claim{Unit: unit, Epoch: f.assignAll()[unit]}, []map[string]string{cfg})
	require.NoError(t, err)

	const key = "target.cluster.sasl.jaas.config"
	for _, path := range []string{"/connectors/c/config", "/connectors/c", "/connectors/c/tasks"} {
		admin := get(path, "admin")
		if c, ok := admin["config"].(map[string]any); ok {
			admin = c
		}
		require.Equal(t, cfg[key], admin[key], "%s as admin", path)
		ro := get(path, "read-only")
		if c, ok := ro["config"].(map[string]any); ok {
			ro = c
		}
		require.Equal(t, "[hidden]", ro[key], "%s as read-only", path)
		require.Equal(t, "SASL_PLAINTEXT", ro["target.cluster.security.protocol"], "%s: other keys unchanged", path)
	}
	expanded := get("/connectors?expand=info", "read-only")
	info := expanded["c"].(map[string]any)["info"].(map[string]any)["config"].(map[string]any)
	require.Equal(t, "[hidden]", info[key])
}
