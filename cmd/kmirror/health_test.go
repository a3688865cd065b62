package main

import (
	"bytes"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/tlsreload/tlstest"
)

// TestHealthChecksItsOwnWorker: without --url, `kmirror health` finds the worker from --listen (and
// KMIRROR_LISTEN), over HTTPS when --tls-cert (KMIRROR_TLS_CERT) is set, trusting exactly that certificate, so
// the image's one HEALTHCHECK works with and without TLS.
func TestHealthChecksItsOwnWorker(t *testing.T) {
	healthy := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"status":"healthy"}`))
	})
	check := func(args ...string) (string, error) {
		var out, errOut bytes.Buffer
		err := run(t.Context(), append([]string{"health"}, args...), &out, &errOut)
		return out.String() + errOut.String(), err
	}
	port := func(s *httptest.Server) string {
		_, p, err := net.SplitHostPort(s.Listener.Addr().String())
		require.NoError(t, err)
		return p
	}

	plain := httptest.NewServer(healthy)
	t.Cleanup(plain.Close)
	out, err := check("--listen", ":"+port(plain))
	require.NoError(t, err, out)
	require.Contains(t, out, "200 OK")

	ca := tlstest.NewCA(t, "CA")
	served := ca.Server("kmirror.example")
	secure := httptest.NewUnstartedServer(healthy)
	secure.TLS = &tls.Config{Certificates: []tls.Certificate{served.TLS}}
	secure.StartTLS()
	t.Cleanup(secure.Close)
	t.Setenv("KMIRROR_LISTEN", "0.0.0.0:"+port(secure))
	t.Setenv("KMIRROR_TLS_CERT", served.CertFile)
	out, err = check()
	require.NoError(t, err, out)
	require.Contains(t, out, "200 OK")

	t.Setenv("KMIRROR_TLS_CERT", ca.Server("impostor").CertFile)
	out, err = check()
	require.ErrorContains(t, err, "the worker presents another certificate than")
	require.NotContains(t, out, "200 OK")
}
