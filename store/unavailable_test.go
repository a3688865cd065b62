package store_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/store/storetest"
)

func TestIsUnavailableClassifies(t *testing.T) {
	t.Parallel()
	wrap := func(err error) error { return fmt.Errorf("read connector: %w", err) }
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"not found", store.ErrNotFound, false},
		{"fenced", wrap(kmtype.ErrFenced), false},
		{"plain error", errors.New("boom"), false},
		{"caller gave up", wrap(context.Canceled), false},
		{"unique violation", wrap(&pgconn.PgError{Code: "23505"}), false},
		{"syntax error", wrap(&pgconn.PgError{Code: "42601", Message: `syntax error at or near "SELEC"`}), false},
		{"statement cancelled", wrap(&pgconn.PgError{Code: "57014"}), false},
		{"admin shutdown", wrap(&pgconn.PgError{Code: "57P01"}), true},
		{"crash shutdown", wrap(&pgconn.PgError{Code: "57P02"}), true},
		{"starting up", wrap(&pgconn.PgError{Code: "57P03"}), true},
		{"connection failure", wrap(&pgconn.PgError{Code: "08006"}), true},
		{"connection exception", wrap(&pgconn.PgError{Code: "08000"}), true},
		{"eof", wrap(io.EOF), true},
		{"unexpected eof", wrap(io.ErrUnexpectedEOF), true},
		{"connection closed by the driver", wrap(pgconn.ErrConnClosed), true},
		{"deadline", wrap(context.DeadlineExceeded), true},
		{"refused", wrap(&net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}), true},
		{"reset", wrap(&net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}), true},
		{"unknown host", wrap(&net.DNSError{Err: "no such host", Name: "db"}), true},
	} {
		require.Equal(t, tc.want, store.IsUnavailable(tc.err), tc.name)
	}
}

// closedPort returns a local TCP port nothing listens on.
func closedPort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := ln.Addr().(*net.TCPAddr).Port
	require.NoError(t, ln.Close())
	return port
}

// TestIsUnavailableOnRealConnectErrors uses the errors pgx really returns when no connection can be opened,
// without a database: a refused port, a server that accepts and never answers, and Open giving up.
func TestIsUnavailableOnRealConnectErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	refused := fmt.Sprintf("postgres://kmirror_user:secret@127.0.0.1:%d/kmirror_db", closedPort(t))

	_, err := pgconn.Connect(ctx, refused)
	require.Error(t, err)
	require.True(t, store.IsUnavailable(err), "%v", err)

	_, err = store.Open(ctx, refused, slog.New(slog.DiscardHandler), store.OpenOptions{ConnectTimeout: 10 * time.Millisecond})
	require.Error(t, err)
	require.True(t, store.IsUnavailable(err), "%v", err)

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { silent.Close() })
	go func() {
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
		}
	}()
	tctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = pgconn.Connect(tctx, "postgres://u@"+silent.Addr().String()+"/d?sslmode=disable")
	require.Error(t, err)
	require.True(t, store.IsUnavailable(err), "%v", err)
}

// TestIsUnavailableOnRealServerErrors takes the errors from the test PostgreSQL: a backend terminated by an
// administrator, then the connection pgx closed because of it, and a query that outlives its deadline are
// unavailability; a bad statement and a missing row are not.
func TestIsUnavailableOnRealServerErrors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := storetest.NewURL(t)

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(context.Background()) })
	_, err = conn.Exec(ctx, "SELEC 1")
	require.Error(t, err)
	require.False(t, store.IsUnavailable(err), "%v", err)

	admin, err := pgx.Connect(ctx, storetest.AdminURL(t))
	require.NoError(t, err)
	t.Cleanup(func() { admin.Close(context.Background()) })
	var terminated bool
	require.NoError(t, admin.QueryRow(ctx, "SELECT pg_terminate_backend($1, 5000)", conn.PgConn().PID()).Scan(&terminated))
	require.True(t, terminated)
	_, err = conn.Exec(ctx, "SELECT 1")
	require.Error(t, err)
	require.True(t, store.IsUnavailable(err), "terminated backend: %v", err)
	_, err = conn.Exec(ctx, "SELECT 1")
	require.Error(t, err)
	require.True(t, store.IsUnavailable(err), "after termination: %v", err)

	slow, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { slow.Close(context.Background()) })
	tctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = slow.Exec(tctx, "SELECT pg_sleep(5)")
	require.Error(t, err)
	require.True(t, store.IsUnavailable(err), "deadline: %v", err)

	s, err := store.Open(ctx, url, slog.New(slog.DiscardHandler), store.OpenOptions{})
	require.NoError(t, err)
	_, err = s.GetConnector(ctx, "missing")
	require.ErrorIs(t, err, store.ErrNotFound)
	require.False(t, store.IsUnavailable(err))
	cctx, cancelNow := context.WithCancel(ctx)
	cancelNow()
	_, err = s.ClusterID(cctx)
	require.Error(t, err)
	require.False(t, store.IsUnavailable(err), "a cancelled request is not an outage: %v", err)

	s.Close()
	_, err = s.ClusterID(ctx)
	require.Error(t, err)
	require.True(t, store.IsUnavailable(err), "closed store: %v", err)
}
