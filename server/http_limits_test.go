package server

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// serveLimited serves an "ok" handler under limits on a loopback port until the test ends.
func serveLimited(t *testing.T, limits HTTPLimits) string {
	t.Helper()
	limits, err := limits.withDefaults()
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv, limited := limits.server(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) }), ln)
	go func() { _ = srv.Serve(limited) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// request sends one keep-alive GET on conn and reads its answer.
func request(conn net.Conn, br *bufio.Reader) error {
	if _, err := conn.Write([]byte("GET / HTTP/1.1\r\nHost: kmirror\r\n\r\n")); err != nil {
		return err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return err
	}
	_, err = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return err
}

// TestIdleConnectionsAreClosed holds 500 idle connections — half after one request, half that never sent
// one — and sees the server close every one of them.
func TestIdleConnectionsAreClosed(t *testing.T) {
	const n = 500
	addr := serveLimited(t, HTTPLimits{IdleTimeout: 300 * time.Millisecond, ReadHeaderTimeout: 500 * time.Millisecond})
	conns := make([]net.Conn, n)
	readers := make([]*bufio.Reader, n)
	for i := range conns {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		conns[i], readers[i] = c, bufio.NewReader(c)
		if i%2 == 0 {
			require.NoError(t, request(c, readers[i]))
		}
	}
	start := time.Now()
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Waits for the server to close the connection; the deadline only bounds a failing test.
			_ = c.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, errs[i] = readers[i].ReadByte()
		}()
	}
	wg.Wait()
	for i, err := range errs {
		require.Falsef(t, errors.Is(err, os.ErrDeadlineExceeded), "connection %d (%s) is still open after %s", i,
			map[bool]string{true: "after a request", false: "never used"}[i%2 == 0], time.Since(start))
		require.Error(t, err, "connection %d was closed by the server", i)
	}
	t.Logf("%d idle connections closed by the server within %s", n, time.Since(start).Round(time.Millisecond))
}

// TestConnectionCap: past MaxConnections a new connection is not served until one of the others closes.
func TestConnectionCap(t *testing.T) {
	addr := serveLimited(t, HTTPLimits{MaxConnections: 3})
	var held []net.Conn
	for range 3 {
		c, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		require.NoError(t, request(c, bufio.NewReader(c)))
		held = append(held, c)
	}
	extra, err := net.Dial("tcp", addr) // the kernel accepts it; the server does not serve it yet
	require.NoError(t, err)
	defer extra.Close()
	answered := make(chan error, 1)
	go func() { answered <- request(extra, bufio.NewReader(extra)) }()
	select {
	case err := <-answered:
		t.Fatalf("a fourth connection was served while three were open (%v)", err)
	case <-time.After(300 * time.Millisecond):
	}
	held[0].Close()
	select {
	case err := <-answered:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the fourth connection was not served once one of the three closed")
	}
}
