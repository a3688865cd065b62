package server

import (
	"bytes"
	"log/slog"
	"net"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNonLoopbackListenerWithoutAuthenticationWarns(t *testing.T) {
	t.Parallel()
	users := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(users, nil, 0o600))
	const open = "THE REST API IS OPEN TO ANYONE WHO REACHES"
	const clear = "REST passwords and tokens cross the network in clear text"
	for _, tc := range []struct {
		addr  string
		sec   Security
		warns string // "" for no warning
	}{
		{":8083", Security{AllowUnauthenticated: true}, open},
		{"0.0.0.0:8083", Security{AllowUnauthenticated: true}, open},
		{"10.1.2.3:8083", Security{AllowUnauthenticated: true}, open},
		{"127.0.0.1:8083", Security{}, ""},
		{"[::1]:8083", Security{}, ""},
		{"10.1.2.3:8083", Security{UsersFile: users}, clear},
		{"127.0.0.1:8083", Security{UsersFile: users}, ""},
	} {
		var buf bytes.Buffer
		loggers, err := NewLoggers(slog.NewTextHandler(&buf, nil), "INFO")
		require.NoError(t, err)
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		require.NoError(t, err)
		_, err = newSecurity(tc.sec, addr, loggers)
		require.NoError(t, err)
		warnings := []string{}
		for _, line := range strings.Split(buf.String(), "\n") {
			if strings.Contains(line, "level=WARN") && !strings.Contains(line, "lists nobody") {
				warnings = append(warnings, line)
			}
		}
		if tc.warns == "" {
			require.Empty(t, warnings, "%s with users file %q", tc.addr, tc.sec.UsersFile)
			continue
		}
		require.Len(t, warnings, 1, "%s with users file %q", tc.addr, tc.sec.UsersFile)
		require.Contains(t, warnings[0], tc.warns, tc.addr)
	}
}

// TestNonLoopbackListenerNeedsAuthenticationOrConsent: authentication is off by default only on loopback
// listeners; on any other, kmirror refuses to start until the operator gives users or says the API may be open.
func TestNonLoopbackListenerNeedsAuthenticationOrConsent(t *testing.T) {
	t.Parallel()
	loggers, err := NewLoggers(slog.DiscardHandler, "INFO")
	require.NoError(t, err)
	for _, a := range []string{":8083", "0.0.0.0:8083", "[::]:8083", "10.1.2.3:8083"} {
		addr, err := net.ResolveTCPAddr("tcp", a)
		require.NoError(t, err)
		_, err = newSecurity(Security{}, addr, loggers)
		require.ErrorContains(t, err, "the REST API would be open to anyone who reaches "+addr.String()+": set --rest-users-file", a)
		require.ErrorContains(t, err, "--listen 127.0.0.1:8083), or pass --rest-allow-unauthenticated", a)
	}
	for _, a := range []string{"127.0.0.1:8083", "[::1]:8083", "127.0.0.2:8083"} {
		addr, err := net.ResolveTCPAddr("tcp", a)
		require.NoError(t, err)
		_, err = newSecurity(Security{}, addr, loggers)
		require.NoError(t, err, "a loopback listener may be open: %s", a)
	}
}

func TestSecurityFlagsMustPair(t *testing.T) {
	t.Parallel()
	loggers, err := NewLoggers(slog.DiscardHandler, "INFO")
	require.NoError(t, err)
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	for _, sec := range []Security{{TLSCert: "c.pem"}, {TLSKey: "k.pem"}, {TLSClientCA: "ca.pem"}} {
		_, err := newSecurity(sec, addr, loggers)
		require.EqualError(t, err, "--tls-cert and --tls-key go together (and --tls-client-ca needs both)")
	}
	_, err = newSecurity(Security{UsersFile: "/no/such/users"}, addr, loggers)
	require.ErrorContains(t, err, "users file: read /no/such/users")
}

func TestOpenRequests(t *testing.T) {
	t.Parallel()
	loggers, err := NewLoggers(slog.DiscardHandler, "INFO")
	require.NoError(t, err)
	addr := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)}
	for _, metricsOpen := range []bool{false, true} {
		s, err := newSecurity(Security{MetricsOpen: metricsOpen}, addr, loggers)
		require.NoError(t, err)
		for target, want := range map[string]bool{
			"GET /health": true, "HEAD /health": true, "GET /health/": true, "POST /health": false,
			"GET /metrics": metricsOpen, "PUT /metrics": false, "GET /": false, "GET /ui/": false,
			"GET /connectors": false, "GET /healthz": false,
		} {
			method, path, _ := strings.Cut(target, " ")
			require.Equal(t, want, s.open(httptest.NewRequest(method, path, nil)), "%s with MetricsOpen %v", target, metricsOpen)
		}
	}
}

// TestAllowedOAuthURLsMustBeHTTPURLs: a typo in --allowed-oauth-urls stops start-up instead of silently
// allowing nothing, and the allowed URLs reach the options the API and the runtime share.
func TestAllowedOAuthURLsMustBeHTTPURLs(t *testing.T) {
	t.Parallel()
	log := slog.New(slog.DiscardHandler)
	for _, bad := range []string{"idp.example/token", "file:///etc/passwd", "https://"} {
		_, err := ClientRules{AllowedFileDirs: []string{t.TempDir()}, AllowedOAuthURLs: []string{bad}}.options(log, nil)
		require.EqualError(t, err, `--allowed-oauth-urls: "`+bad+`" is not an http(s) URL`)
	}
	opts, err := ClientRules{AllowedFileDirs: []string{t.TempDir()}, AllowedOAuthURLs: []string{"https://idp.example/token"}}.options(log, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"https://idp.example/token"}, opts.OAuthURLs)
}
