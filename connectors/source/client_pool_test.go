package source

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/clientconfig"
)

type fakeClient struct {
	props  map[string]string
	closed bool
}

func fakePool(opened *int) *clientPool[*fakeClient] {
	return newClientPool(func(props map[string]string) (*fakeClient, error) {
		if props["fail"] != "" {
			return nil, errors.New("refused")
		}
		*opened++
		return &fakeClient{props: props}, nil
	}, func(c *fakeClient) { c.closed = true })
}

// TestClientPoolSharesByProperties: identical properties are one client, opened once and closed when its last
// user gives it back; other properties are another client; a release called twice counts once.
func TestClientPoolSharesByProperties(t *testing.T) {
	opened := 0
	pool := fakePool(&opened)
	a1, releaseA1, err := pool.acquire(map[string]string{"bootstrap.servers": "a:9092", "client.id": "x"})
	require.NoError(t, err)
	a2, releaseA2, err := pool.acquire(map[string]string{"client.id": "x", "bootstrap.servers": "a:9092"})
	require.NoError(t, err)
	b, releaseB, err := pool.acquire(map[string]string{"bootstrap.servers": "b:9092", "client.id": "x"})
	require.NoError(t, err)
	require.Same(t, a1, a2)
	require.NotSame(t, a1, b)
	require.Equal(t, 2, opened)

	releaseA1()
	releaseA1()
	require.False(t, a1.closed, "closed while a user still holds it")
	releaseA2()
	require.True(t, a1.closed)
	require.False(t, b.closed)
	releaseB()
	require.True(t, b.closed)

	again, releaseAgain, err := pool.acquire(map[string]string{"bootstrap.servers": "a:9092", "client.id": "x"})
	require.NoError(t, err)
	defer releaseAgain()
	require.NotSame(t, a1, again, "a closed client was handed out again")
	require.Equal(t, 3, opened)
}

func TestClientPoolOpenFailureLeavesNothing(t *testing.T) {
	opened := 0
	pool := fakePool(&opened)
	_, _, err := pool.acquire(map[string]string{"fail": "yes"})
	require.Error(t, err)
	require.Empty(t, pool.clients)
}

// TestPooledAdminPropsAreTheConnectors: the C path's admin clients connect as the task's consumer and producer
// do, without their consumer and producer settings, under the client.id MM2 gives the connector's admin client
// of the role — the same for every task of the connector, so that the worker opens one of each.
func TestPooledAdminPropsAreTheConnectors(t *testing.T) {
	run := func(task int) *sourceRun {
		r := txnRun(t, map[string]string{"source.cluster.security.protocol": "SSL"})
		r.t.id.Task = task
		var err error
		r.consumerProps, err = r.t.cfg.ClientProps(clientconfig.ReplicationConsumer, "mm2", task)
		require.NoError(t, err)
		r.producerProps, err = r.t.cfg.ClientProps(clientconfig.ReplicationProducer, "mm2", task)
		require.NoError(t, err)
		return r
	}
	r0, r1 := run(0), run(1)
	for _, tc := range []struct {
		role     clientconfig.Role
		props    func(*sourceRun) map[string]string
		clientID string
	}{
		{clientconfig.SourceAdmin, func(r *sourceRun) map[string]string { return r.consumerProps }, "A->B|mm2|replication-source-admin"},
		{clientconfig.TargetAdmin, func(r *sourceRun) map[string]string { return r.producerProps }, "A->B|mm2|replication-target-admin"},
	} {
		t.Run(tc.role.String(), func(t *testing.T) {
			p0, err := r0.pooledAdminProps(tc.role, tc.props(r0))
			require.NoError(t, err)
			p1, err := r1.pooledAdminProps(tc.role, tc.props(r1))
			require.NoError(t, err)
			require.Equal(t, p0, p1)
			require.Equal(t, tc.clientID, p0["client.id"])
			require.Equal(t, tc.props(r0)["bootstrap.servers"], p0["bootstrap.servers"])
			require.NotContains(t, p0, "group.id")
			require.NotContains(t, p0, "linger.ms")
		})
	}
	src, err := r0.pooledAdminProps(clientconfig.SourceAdmin, r0.consumerProps)
	require.NoError(t, err)
	require.Equal(t, "ssl", src["security.protocol"], "the source admin does not connect as the consumer does")
}

// TestTasksOfAConnectorShareAnAdminClient: what the C engine calls gives two tasks of one connector on one worker
// the same admin client, and it stays open until both have released it.
func TestTasksOfAConnectorShareAnAdminClient(t *testing.T) {
	pool := newAdminPool(slog.New(slog.DiscardHandler))
	run := func(task int) *sourceRun {
		r := txnRun(t, map[string]string{"target.cluster.bootstrap.servers": "127.0.0.1:1"})
		r.t.id.Task = task
		r.t.admins = pool
		var err error
		r.producerProps, err = r.t.cfg.ClientProps(clientconfig.ReplicationProducer, "mm2", task)
		require.NoError(t, err)
		return r
	}
	r0, r1 := run(0), run(1)
	a0, release0, err := r0.acquireAdmin(clientconfig.TargetAdmin, r0.producerProps)
	require.NoError(t, err)
	a1, release1, err := r1.acquireAdmin(clientconfig.TargetAdmin, r1.producerProps)
	require.NoError(t, err)
	require.Same(t, a0, a1)
	require.Equal(t, taskAdminTimeout, a0.Timeout)
	release0()
	require.Len(t, pool.clients, 1, "closed while a task still holds it")
	release1()
	require.Empty(t, pool.clients)
}
