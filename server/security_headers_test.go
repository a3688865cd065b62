package server_test

import (
	"crypto/tls"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSecurityHeaders: every response, refusals included, says nosniff, and over HTTPS carries HSTS; the
// dashboard may not be framed by any page (CSP frame-ancestors and X-Frame-Options); TLS 1.2 offers AEAD
// suites only.
func TestSecurityHeaders(t *testing.T) {
	s := startSecured(t)
	alice := basicAuth("alice", "alice-pw")
	// /health answers 503 until the worker has joined the cluster; every answer carries the headers, and the
	// table below wants the joined one.
	require.Eventually(t, func() bool {
		resp, _ := s.send(http.MethodGet, "/health", "", nil)
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "the worker joins")
	for _, c := range []struct {
		path, auth string
		code       int
	}{
		{"/connectors", "", http.StatusUnauthorized},
		{"/connectors", alice, http.StatusOK},
		{"/connectors/nope", alice, http.StatusNotFound},
		{"/metrics", alice, http.StatusOK},
		{"/health", "", http.StatusOK},
		{"/ui/", alice, http.StatusOK},
		{"/ui/static/app.css", alice, http.StatusOK},
	} {
		resp, _ := s.send(http.MethodGet, c.path, c.auth, nil)
		require.Equal(t, c.code, resp.StatusCode, c.path)
		require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"), c.path)
		require.Equal(t, "max-age=31536000", resp.Header.Get("Strict-Transport-Security"), c.path)
		if strings.HasPrefix(c.path, "/ui") {
			require.Contains(t, resp.Header.Get("Content-Security-Policy"), "frame-ancestors 'none'", c.path)
			require.Equal(t, "DENY", resp.Header.Get("X-Frame-Options"), c.path)
		}
	}

	addr := strings.TrimPrefix(s.url, "https://")
	handshake := func(suites ...uint16) error {
		conn, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: s.ca.Pool(),
			MinVersion: tls.VersionTLS12, MaxVersion: tls.VersionTLS12, CipherSuites: suites})
		if err == nil {
			conn.Close()
		}
		return err
	}
	for _, cbc := range []uint16{tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA,
		tls.TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA, tls.TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA, tls.TLS_RSA_WITH_AES_128_GCM_SHA256} {
		require.Error(t, handshake(cbc), "TLS 1.2 with %s", tls.CipherSuiteName(cbc))
	}
	require.NoError(t, handshake(tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256))

	// Plain HTTP: nosniff, and no HSTS, which a browser would ignore there anyway.
	k := startKmirror(t, "")
	resp, err := k.client.Get(k.url + "/connectors")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "nosniff", resp.Header.Get("X-Content-Type-Options"))
	require.Empty(t, resp.Header.Get("Strict-Transport-Security"))
}
