package api_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/api"
)

func TestServerInfo(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	id, err := f.store.ClusterID(context.Background())
	require.NoError(t, err)
	requireJSON(t, f.do("GET", "/", ""), http.StatusOK, `{"version":"4.1.1","commit":"","kafka_cluster_id":"`+id+`"}`)

	f = newFixtureWith(t, func(c *api.Config) {
		c.Info = func(context.Context) (api.ServerInfo, error) {
			return api.ServerInfo{Version: "4.1.1", Commit: "0123456789abcdef", ClusterID: "Xb3"}, nil
		}
	})
	requireJSON(t, f.do("GET", "/", ""), http.StatusOK, `{"version":"4.1.1","commit":"0123456789abcdef","kafka_cluster_id":"Xb3"}`)

	f = newFixtureWith(t, func(c *api.Config) {
		c.Info = func(context.Context) (api.ServerInfo, error) {
			return api.ServerInfo{}, errors.New("cluster id unavailable")
		}
	})
	// The error's text goes to the log, not to the client (see TestInternalErrorsStayInTheLog).
	requireError(t, f.do("GET", "/", ""), http.StatusInternalServerError, "Internal server error while handling GET /; see the worker's log")
}

func TestHealth(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	requireJSON(t, f.do("GET", "/health", ""), http.StatusOK,
		`{"status":"healthy","message":"Worker has completed startup and is ready to handle requests."}`)

	// Whatever the code, the body is WorkerStatus, never an error body.
	f = newFixtureWith(t, func(c *api.Config) {
		c.Health = func(context.Context) api.Health {
			return api.Health{Code: http.StatusServiceUnavailable, Status: "starting", Message: "Worker is still starting up."}
		}
	})
	requireJSON(t, f.do("GET", "/health", ""), http.StatusServiceUnavailable, `{"status":"starting","message":"Worker is still starting up."}`)
}

func TestOpenAPIDocumentIsServed(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	r := f.do("GET", "/openapi.json", "")
	require.Equal(t, http.StatusOK, r.status)
	doc := decode[map[string]any](t, r)
	require.Equal(t, "3.0.3", doc["openapi"])
	require.Regexp(t, regexp.MustCompile(`^\d+\.\d+\.\d+$`), doc["info"].(map[string]any)["version"])
}
