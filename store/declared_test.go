package store_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

func declared(name, tasks string) store.Declared {
	return store.Declared{Name: name, Config: map[string]string{"name": name, "connector.class": "X", "tasks.max": tasks}}
}

func everything(store.Connector) bool { return true }

func TestDeclareConverges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	const file = "/etc/kmirror/mm2.properties"

	_, err := s.CreateConnector(ctx, "rest", map[string]string{"name": "rest"}, store.TargetStarted)
	require.NoError(t, err)

	x := declared("A->B.x", "1")
	x.Offsets = []kmtype.Offset{{Partition: map[string]any{"cluster": "A", "topic": "t", "partition": 0}, Offset: map[string]any{"offset": 41}}}
	x.TakenOver = &store.Takeover{Topic: "mm2-offsets.A.internal", Partitions: 1}
	res, err := s.Declare(ctx, file, []store.Declared{x, declared("A->B.y", "1"), declared("rest", "1")}, everything)
	require.NoError(t, err)
	require.Equal(t, []string{"A->B.x", "A->B.y"}, res.Created)
	require.Equal(t, []string{"rest"}, res.Skipped, "a REST-created connector is never taken over")
	c, err := s.GetConnector(ctx, "A->B.x")
	require.NoError(t, err)
	require.Equal(t, file, c.DeclaredBy)
	require.Equal(t, store.TargetStarted, c.TargetState)
	offs, err := s.Offsets(ctx, "A->B.x")
	require.NoError(t, err)
	require.Len(t, offs, 1, "offsets given with a declaration are stored when it creates the connector")
	require.Equal(t, "41", fmt.Sprint(offs[0].Offset["offset"]))
	require.Equal(t, &store.Takeover{Topic: "mm2-offsets.A.internal", Partitions: 1, At: c.CreatedAt}, c.TakenOver,
		"the connector keeps what it took over, dated by its creation")
	y, err := s.GetConnector(ctx, "A->B.y")
	require.NoError(t, err)
	require.Nil(t, y.TakenOver, "a connector declared without offsets took nothing over")
	rest, err := s.GetConnector(ctx, "rest")
	require.NoError(t, err)
	require.Empty(t, rest.DeclaredBy)
	require.Equal(t, map[string]string{"name": "rest"}, rest.Config)

	// The same declaration again changes nothing.
	res, err = s.Declare(ctx, file, []store.Declared{declared("A->B.x", "1"), declared("A->B.y", "1")}, everything)
	require.NoError(t, err)
	require.Equal(t, []string{"A->B.x", "A->B.y"}, res.Unchanged)
	require.Empty(t, res.Created)
	require.Empty(t, res.Updated)
	require.Empty(t, res.Deleted)

	// A changed key is applied keeping the target state; a removed flow is deleted; REST's connector stays.
	require.NoError(t, s.SetTargetState(ctx, "A->B.x", store.TargetPaused))
	res, err = s.Declare(ctx, file, []store.Declared{declared("A->B.x", "4")}, everything)
	require.NoError(t, err)
	require.Equal(t, []string{"A->B.x"}, res.Updated)
	require.Equal(t, []string{"A->B.y"}, res.Deleted)
	c, err = s.GetConnector(ctx, "A->B.x")
	require.NoError(t, err)
	require.Equal(t, "4", c.Config["tasks.max"])
	require.Equal(t, store.TargetPaused, c.TargetState)
	_, err = s.GetConnector(ctx, "A->B.y")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.GetConnector(ctx, "rest")
	require.NoError(t, err)

	// Outside the declaration's scope (another worker's --clusters), nothing is deleted.
	res, err = s.Declare(ctx, file, nil, func(c store.Connector) bool { return !strings.HasPrefix(c.Name, "A->B.") })
	require.NoError(t, err)
	require.Empty(t, res.Deleted)

	// Another file takes a connector over: the last declaration wins.
	res, err = s.Declare(ctx, "/other.properties", []store.Declared{declared("A->B.x", "4")}, everything)
	require.NoError(t, err)
	require.Equal(t, []string{"A->B.x"}, res.Updated)
	c, err = s.GetConnector(ctx, "A->B.x")
	require.NoError(t, err)
	require.Equal(t, "/other.properties", c.DeclaredBy)
}

func TestDeclareConcurrentlyCreatesOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := storetest.New(t)
	want := []store.Declared{declared("A->B.x", "1"), declared("B->A.y", "1")}
	var wg sync.WaitGroup
	results := make([]store.DeclareResult, 4)
	errs := make([]error, 4)
	for i := range results {
		wg.Go(func() { results[i], errs[i] = s.Declare(ctx, "/f", want, everything) })
	}
	wg.Wait()
	created := 0
	for i := range results {
		require.NoError(t, errs[i])
		created += len(results[i].Created)
	}
	require.Equal(t, 2, created, "each connector is created by exactly one of the concurrent declarations")
	h, err := s.ConnectorHistory(ctx, "A->B.x")
	require.NoError(t, err)
	require.Len(t, h, 1)
}
