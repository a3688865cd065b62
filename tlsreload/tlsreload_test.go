package tlsreload_test

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/tlsreload"
	"github.com/kmirror/kmirror/tlsreload/tlstest"
)

// serve runs an HTTPS server with r's configuration until the test ends and returns its address.
func serve(t *testing.T, r *tlsreload.Reloader) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{TLSConfig: r.TLSConfig(), Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// How many verified client certificate chains the request came with.
		_, _ = w.Write([]byte(strconv.Itoa(len(req.TLS.VerifiedChains))))
	})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{}, 2)
	go func() { r.Run(ctx); done <- struct{}{} }()
	go func() {
		if err := srv.ServeTLS(ln, "", ""); !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve TLS: %v", err)
		}
		done <- struct{}{}
	}()
	t.Cleanup(func() { cancel(); _ = srv.Close(); <-done; <-done })
	return ln.Addr().String()
}

// servedSerial is the serial number of the certificate the server presents.
func servedSerial(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	c, err := tls.Dial("tcp", addr, cfg)
	require.NoError(t, err)
	defer c.Close()
	return c.ConnectionState().PeerCertificates[0].SerialNumber.String()
}

func TestCertificateReloadsWithoutRestart(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "test CA")
	first := ca.Server("kmirror one")
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first.Install(t, certFile, keyFile)
	r, err := tlsreload.New(tlsreload.Config{CertFile: certFile, KeyFile: keyFile, Interval: 20 * time.Millisecond})
	require.NoError(t, err)
	addr := serve(t, r)
	client := &tls.Config{RootCAs: ca.Pool(), ServerName: "localhost"}
	require.Equal(t, first.Leaf.SerialNumber.String(), servedSerial(t, addr, client))

	// HTTP/2 is negotiated through the per-handshake configuration.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: client, ForceAttemptHTTP2: true}}
	resp, err := hc.Get("https://" + addr)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "HTTP/2.0", resp.Proto)

	second := ca.Server("kmirror two")
	second.Install(t, certFile, keyFile)
	require.Eventually(t, func() bool { return servedSerial(t, addr, client) == second.Leaf.SerialNumber.String() },
		5*time.Second, 10*time.Millisecond, "the renewed certificate is served without a restart")

	// A broken version (a key that is not the certificate's) keeps the previous certificate.
	third := ca.Server("kmirror three")
	b, err := os.ReadFile(third.KeyFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(keyFile, b, 0o600))
	fourth := ca.Server("kmirror four")
	b, err = os.ReadFile(fourth.CertFile)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(certFile, b, 0o600))
	require.Equal(t, second.Leaf.SerialNumber.String(), servedSerial(t, addr, client))
	third.Install(t, certFile, keyFile) // fixed: both files match again
	require.Eventually(t, func() bool { return servedSerial(t, addr, client) == third.Leaf.SerialNumber.String() },
		5*time.Second, 10*time.Millisecond)
}

// TestClientCertificateVerifiedWhenGiven: with client CAs, a certificate from one of them is verified and
// reaches the handler as a verified chain; one from another CA fails the handshake; none at all is let through
// without a chain, for the server to refuse everything but /health (package server does).
func TestClientCertificateVerifiedWhenGiven(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "server CA")
	clientCA := tlstest.NewCA(t, "client CA")
	other := tlstest.NewCA(t, "someone else's CA")
	pair := ca.Server("kmirror")
	r, err := tlsreload.New(tlsreload.Config{CertFile: pair.CertFile, KeyFile: pair.KeyFile, ClientCAFile: clientCA.File})
	require.NoError(t, err)
	require.True(t, r.RequiresClientCert())
	addr := serve(t, r)
	get := func(certs ...tls.Certificate) (string, error) {
		cfg := &tls.Config{RootCAs: ca.Pool()}
		if len(certs) > 0 {
			// Sent whatever CAs the server asks for, so that a certificate from the wrong CA reaches it.
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &certs[0], nil }
		}
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: cfg}}
		resp, err := hc.Get("https://" + addr)
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	chains, err := get(clientCA.Client("operator").TLS)
	require.NoError(t, err)
	require.Equal(t, "1", chains, "a certificate of the client CA is verified")
	chains, err = get()
	require.NoError(t, err)
	require.Equal(t, "0", chains, "no certificate: no chain, for the handler to refuse")
	_, err = get(other.Client("stranger").TLS)
	require.ErrorContains(t, err, "unknown certificate authority")
}

func TestLoadErrorsNameTheFile(t *testing.T) {
	t.Parallel()
	ca := tlstest.NewCA(t, "CA")
	a, b := ca.Server("a"), ca.Server("b")
	_, err := tlsreload.New(tlsreload.Config{CertFile: a.CertFile, KeyFile: b.KeyFile})
	require.ErrorContains(t, err, "TLS certificate "+a.CertFile+" with key "+b.KeyFile+": ")
	_, err = tlsreload.New(tlsreload.Config{CertFile: a.CertFile, KeyFile: a.KeyFile, ClientCAFile: a.KeyFile})
	require.ErrorContains(t, err, "TLS client CA file "+a.KeyFile+" holds no PEM certificate")
	missing := filepath.Join(t.TempDir(), "nope.pem")
	_, err = tlsreload.New(tlsreload.Config{CertFile: missing, KeyFile: a.KeyFile})
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, missing)
	_, err = tlsreload.New(tlsreload.Config{CertFile: a.CertFile})
	require.ErrorContains(t, err, "TLS needs both a certificate file and a key file")
}
