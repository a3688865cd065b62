package api_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopics(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	ctx := context.Background()
	// Like Connect, no existence check.
	requireJSON(t, f.do("GET", "/connectors/nope/topics", ""), http.StatusOK, `{"nope":{"topics":[]}}`)
	requireEmpty(t, f.do("PUT", "/connectors/nope/topics/reset", ""), http.StatusAccepted)

	f.create("c", sourceConfig())
	require.NoError(t, f.store.RecordTopics(ctx, "c", []string{"B.orders", "B.audit"}))
	requireJSON(t, f.do("GET", "/connectors/c/topics", ""), http.StatusOK, `{"c":{"topics":["B.audit","B.orders"]}}`)
	requireEmpty(t, f.do("PUT", "/connectors/c/topics/reset", ""), http.StatusAccepted)
	requireJSON(t, f.do("GET", "/connectors/c/topics", ""), http.StatusOK, `{"c":{"topics":[]}}`)
}
