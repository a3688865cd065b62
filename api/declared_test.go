package api_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/store"
)

// A connector declared from an mm2.properties says so, refuses config writes and deletion with 409 naming the
// file, and keeps the operations that do not change what the file says.
func TestDeclaredConnectorRefusesConfigWrites(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const file = "/etc/kmirror/mm2.properties"
	name := "A->B.MirrorSourceConnector"
	cfg := sourceConfig()
	cfg["name"] = name
	_, err := f.store.Declare(context.Background(), file, []store.Declared{{Name: name, Config: cfg}}, func(store.Connector) bool { return true })
	require.NoError(t, err)
	f.create("rest", sourceConfig())
	path := "/connectors/" + url.PathEscape(name)

	info := decode[map[string]any](t, f.do("GET", path, ""))
	require.Equal(t, file, info["declared_by"])
	rest := decode[map[string]any](t, f.do("GET", "/connectors/rest", ""))
	require.NotContains(t, rest, "declared_by", "a REST-created connector's body stays Connect's")

	msg := "Connector " + name + " is declared by " + file + ": change or remove it there (a worker applies the file when it starts); " +
		"pause, resume, stop, restart and offsets work as for any connector"
	requireError(t, f.do("PUT", path+"/config", jsonText(t, cfg)), http.StatusConflict, msg)
	requireError(t, f.do("PATCH", path+"/config", `{"tasks.max":"3"}`), http.StatusConflict, msg)
	requireError(t, f.do("DELETE", path, ""), http.StatusConflict, msg)
	requireError(t, f.do("POST", "/connectors", jsonText(t, map[string]any{"name": name, "config": cfg})),
		http.StatusConflict, "Connector "+name+" already exists")
	require.Equal(t, cfg, f.connector(name).Config, "nothing changed")

	requireEmpty(t, f.do("PUT", path+"/pause", ""), http.StatusAccepted)
	require.Equal(t, store.TargetPaused, f.connector(name).TargetState)
	requireEmpty(t, f.do("PUT", path+"/resume", ""), http.StatusAccepted)

	requireEmpty(t, f.do("DELETE", "/connectors/rest", ""), http.StatusNoContent)
}
