package server_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	legacyrouter "github.com/getkin/kin-openapi/routers/legacy"
	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/kmirror/kmirror/auth"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/server"
	"github.com/kmirror/kmirror/tlsreload/tlstest"
)

// secured is a kmirror serving HTTPS with a certificate from a CA made by the test, and authentication from a
// users file: alice is admin, bob read-only, and the token is read-only (for a Prometheus server, say).
type secured struct {
	*kmirror
	ca                *tlstest.CA
	usersFile         string
	certFile, keyFile string
	token             string
	https             *http.Client // trusts the test CA, and only it
}

func bcryptLine(t *testing.T, name string, role auth.Role, password string) string {
	t.Helper()
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost) // the work factor is not under test
	require.NoError(t, err)
	line, err := auth.Entry(name, role, string(h))
	require.NoError(t, err)
	return line
}

func replaceFile(t *testing.T, file string, content string) {
	t.Helper()
	require.NoError(t, os.WriteFile(file+".new", []byte(content), 0o600))
	require.NoError(t, os.Rename(file+".new", file))
}

func startSecured(t *testing.T, opts ...func(*server.Config)) *secured {
	t.Helper()
	ca := tlstest.NewCA(t, "kmirror test CA")
	dir := t.TempDir()
	s := &secured{ca: ca, usersFile: filepath.Join(dir, "users"), certFile: filepath.Join(dir, "tls.crt"), keyFile: filepath.Join(dir, "tls.key")}
	ca.Server("kmirror").Install(t, s.certFile, s.keyFile)
	token, tokenHash, err := auth.NewToken()
	require.NoError(t, err)
	s.token = token
	tokenLine, err := auth.Entry("prometheus", auth.RoleReadOnly, tokenHash)
	require.NoError(t, err)
	replaceFile(t, s.usersFile, strings.Join([]string{
		bcryptLine(t, "alice", auth.RoleAdmin, "alice-pw"),
		bcryptLine(t, "bob", auth.RoleReadOnly, "bob-pw"),
		tokenLine, ""}, "\n"))
	s.kmirror = startKmirror(t, "", append([]func(*server.Config){func(c *server.Config) {
		c.Security = server.Security{UsersFile: s.usersFile, TLSCert: s.certFile, TLSKey: s.keyFile, ReloadInterval: 50 * time.Millisecond}
	}}, opts...)...)
	s.https = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: ca.Pool()}}}
	s.kmirror.client = s.https
	return s
}

// send sends a request with the given Authorization header ("" for none) and a JSON body if not nil, and
// returns the response and its body.
func (s *secured) send(method, path, authorization string, body any) (*http.Response, string) {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(s.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	require.NoError(s.t, err)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := s.https.Do(req)
	require.NoError(s.t, err, "%s %s", method, path)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(s.t, err)
	return resp, string(raw)
}

func basicAuth(user, password string) string {
	r, _ := http.NewRequest(http.MethodGet, "http://x", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

// sourceConfig is a valid MirrorSourceConnector config replicating topic from A to B.
func sourceConfig(t *testing.T, topic string) map[string]string {
	return map[string]string{
		"connector.class": sourceClass, "source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": kafkatest.Bootstrap(t, "A"), "target.cluster.bootstrap.servers": kafkatest.Bootstrap(t, "B"),
		"topics": topic, "tasks.max": "1", "replication.factor": "1", "offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled": "false",
	}
}

// TestRESTOverHTTPSWithAuthentication runs the REST API's security as a client meets it, against a real kmirror
// over HTTPS: who gets in, what each role may do, what stays open, and users and certificates changed while it
// runs.
func TestRESTOverHTTPSWithAuthentication(t *testing.T) {
	t.Parallel()
	s := startSecured(t)
	alice, bob := basicAuth("alice", "alice-pw"), basicAuth("bob", "bob-pw")

	// /health is open to probes; it says "starting" until the runtime joined the cluster.
	require.Eventually(t, func() bool {
		resp, _ := s.send(http.MethodGet, "/health", "", nil)
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "GET /health without credentials")

	// Refused: Connect's 401.
	for _, path := range []string{"/", "/connectors", "/metrics", "/openapi.json", "/ui/", "/no-such-path"} {
		resp, body := s.send(http.MethodGet, path, "", nil)
		require.Equal(t, http.StatusUnauthorized, resp.StatusCode, path)
		require.Equal(t, "User cannot access the resource.", body, path)
		require.Contains(t, resp.Header.Values("WWW-Authenticate"), `Basic realm="kmirror", charset="UTF-8"`, path)
	}
	resp, _ := s.send(http.MethodGet, "/connectors", basicAuth("alice", "bob-pw"), nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "another user's password")

	// Read-only reads everything, writes nothing.
	resp, body := s.send(http.MethodGet, "/connectors", bob, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Equal(t, "[]", body)
	resp, body = s.send(http.MethodGet, "/workers", bob, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, `"https://`, "the advertised URL of a TLS listener is https")
	topic := kafkatest.TopicName(t, "sec")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	create := map[string]any{"name": "secured", "config": sourceConfig(t, topic)}
	for _, who := range []string{bob, "Bearer " + s.token} {
		resp, body = s.send(http.MethodPost, "/connectors", who, create)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, body)
		require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		require.Regexp(t, `^\{"error_code":403,"message":"User (bob|prometheus) has the read-only role, which may only read \(GET\); POST /connectors needs the admin role"\}$`, body)
	}
	resp, body = s.send(http.MethodPut, "/connector-plugins/"+sourceClass+"/config/validate", bob, sourceConfig(t, topic))
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "read-only is GET and HEAD only, validate included: %s", body)

	// Admin writes.
	resp, body = s.send(http.MethodPost, "/connectors", alice, create)
	require.Equal(t, http.StatusCreated, resp.StatusCode, body)
	require.True(t, strings.HasPrefix(resp.Header.Get("Location"), "https://"), resp.Header.Get("Location"))
	resp, body = s.send(http.MethodPut, "/connectors/secured/pause", bob, nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	resp, body = s.send(http.MethodGet, "/connectors/secured/config", bob, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	resp, body = s.send(http.MethodGet, "/connectors/secured/config?revealSecrets=true", bob, nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "only an admin may read secrets: %s", body)
	resp, body = s.send(http.MethodGet, "/connectors/secured/config?revealSecrets=true", alice, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)

	// /metrics needs a role; a token is how a scraper sends one.
	resp, body = s.send(http.MethodGet, "/metrics", "Bearer "+s.token, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	require.Contains(t, body, "# TYPE ")

	// Plain HTTP on the HTTPS port gets nowhere.
	plain, err := http.Get(strings.Replace(s.url, "https://", "http://", 1) + "/connectors")
	require.NoError(t, err)
	plain.Body.Close()
	require.Equal(t, http.StatusBadRequest, plain.StatusCode)

	// A client that does not trust the CA refuses the server.
	_, err = http.Get(s.url + "/health")
	require.ErrorContains(t, err, "certificate signed by unknown authority")

	// A user added to the file, and bob removed, while kmirror runs.
	replaceFile(t, s.usersFile, bcryptLine(t, "alice", auth.RoleAdmin, "alice-pw")+"\n"+bcryptLine(t, "carol", auth.RoleReadOnly, "carol-pw")+"\n")
	require.Eventually(t, func() bool {
		resp, _ := s.send(http.MethodGet, "/connectors", basicAuth("carol", "carol-pw"), nil)
		return resp.StatusCode == http.StatusOK
	}, 10*time.Second, 20*time.Millisecond, "carol is let in without a restart")
	resp, _ = s.send(http.MethodGet, "/connectors", bob, nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "bob is out")

	// A renewed certificate is served without a restart, on new connections.
	renewed := s.ca.Server("kmirror renewed")
	renewed.Install(t, s.certFile, s.keyFile)
	require.Eventually(t, func() bool {
		c, err := tls.Dial("tcp", strings.TrimPrefix(s.url, "https://"), &tls.Config{RootCAs: s.ca.Pool(), ServerName: "127.0.0.1"})
		if err != nil {
			return false
		}
		defer c.Close()
		return c.ConnectionState().PeerCertificates[0].SerialNumber.Cmp(renewed.Leaf.SerialNumber) == 0
	}, 10*time.Second, 20*time.Millisecond, "the renewed certificate is served")
	resp, body = s.send(http.MethodGet, "/connectors", alice, nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
}

// TestCurlOverHTTPSWithAuthentication checks the curl commands of docs/security.md against a real kmirror: curl is what
// operators use, and it negotiates HTTP/2 and sends basic auth its own way.
func TestCurlOverHTTPSWithAuthentication(t *testing.T) {
	t.Parallel()
	curl, err := exec.LookPath("curl")
	if err != nil {
		t.Skip("no curl on this machine")
	}
	s := startSecured(t)
	run := func(args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command(curl, append([]string{"-sS", "--cacert", s.ca.File, "-w", "\n%{http_code} %{http_version}"}, args...)...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "curl %v: %s", args, out)
		text := string(out)
		i := strings.LastIndex(text, "\n")
		return text[:i], text[i+1:]
	}
	body, status := run(s.url + "/connectors")
	require.Equal(t, "401 2", status)
	require.Equal(t, "User cannot access the resource.", body)
	body, status = run("-u", "bob:bob-pw", s.url+"/connectors")
	require.Equal(t, "200 2", status, "HTTP/2 over TLS: %s", body)
	require.Equal(t, "[]", body)
	body, status = run("-u", "bob:bob-pw", "-X", "DELETE", s.url+"/connectors/x")
	require.Equal(t, "403 2", status, body)
	body, status = run("-H", "Authorization: Bearer "+s.token, s.url+"/metrics")
	require.Equal(t, "200 2", status, body)
	body, status = run("-u", "alice:alice-pw", "-X", "DELETE", s.url+"/connectors/x")
	require.Equal(t, "404 2", status, "admin gets through to the API: %s", body)
	body, status = run(s.url + "/health")
	require.Contains(t, []string{"200 2", "503 2"}, status, "open, healthy or still starting: %s", body)
}

// TestRESTClientCertificateRequired: with --tls-client-ca, a client without a certificate from that CA does
// not complete the handshake; one with it does, and still needs a user.
func TestRESTClientCertificateRequired(t *testing.T) {
	t.Parallel()
	clientCA := tlstest.NewCA(t, "client CA")
	s := startSecured(t, func(c *server.Config) { c.Security.TLSClientCA = clientCA.File })
	// Without a certificate: /health answers (probes present none), everything else is refused before
	// authentication, credentials or not.
	require.Eventually(t, func() bool {
		resp, _ := s.send(http.MethodGet, "/health", "", nil)
		return resp.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "/health answers a probe without a certificate")
	var resp *http.Response
	var body string
	for _, who := range []string{"", basicAuth("alice", "alice-pw")} {
		resp, body = s.send(http.MethodGet, "/connectors", who, nil)
		require.Equal(t, http.StatusForbidden, resp.StatusCode, body)
		require.Contains(t, body, "A client certificate issued by a CA of --tls-client-ca is required")
	}
	resp, body = s.send(http.MethodPost, "/health", basicAuth("alice", "alice-pw"), nil)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "only a probe's GET is let through: %s", body)
	// A certificate of another CA fails the handshake.
	stranger := tlstest.NewCA(t, "someone else's CA").Client("stranger")
	foreign := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: s.ca.Pool(),
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &stranger.TLS, nil }}}}
	_, err := foreign.Get(s.url + "/health")
	require.ErrorContains(t, err, "unknown certificate authority")
	cert := clientCA.Client("operator")
	withCert := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{
		RootCAs: s.ca.Pool(), Certificates: []tls.Certificate{cert.TLS}}}}
	s.https = withCert
	resp, body = s.send(http.MethodGet, "/connectors", "", nil)
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode, "a client certificate is not a user: %s", body)
	resp, body = s.send(http.MethodGet, "/connectors", basicAuth("bob", "bob-pw"), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)

	if curl, err := exec.LookPath("curl"); err == nil {
		out, err := exec.Command(curl, "-sS", "--cacert", s.ca.File, "--cert", cert.CertFile, "--key", cert.KeyFile,
			"-u", "bob:bob-pw", s.url+"/connectors").CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, "[]", string(out))
	}
}

// states is kmirror.states with alice's credentials.
func (s *secured) states(name string) string {
	s.t.Helper()
	resp, body := s.send(http.MethodGet, "/connectors/"+url.PathEscape(name)+"/status", basicAuth("alice", "alice-pw"), nil)
	if resp.StatusCode != http.StatusOK {
		return ""
	}
	var st struct {
		Connector struct{ State string }
		Tasks     []struct{ State string }
	}
	require.NoError(s.t, json.Unmarshal([]byte(body), &st), body)
	out := st.Connector.State
	for _, tk := range st.Tasks {
		out += " " + tk.State
	}
	return out
}

func (s *secured) awaitStates(name, want string, within time.Duration) {
	s.t.Helper()
	require.Eventually(s.t, func() bool { return s.states(name) == want }, within, 50*time.Millisecond,
		"connector %s never reached %q (last %q)", name, want, s.states(name))
}

// TestAuthenticationAnswersMatchOpenAPI checks that the 401 and 403 a secured kmirror gives are answers its
// OpenAPI document describes, so that generated clients and schemathesis expect them.
func TestAuthenticationAnswersMatchOpenAPI(t *testing.T) {
	t.Parallel()
	s := startSecured(t)
	resp, body := s.send(http.MethodGet, "/openapi.json", basicAuth("bob", "bob-pw"), nil)
	require.Equal(t, http.StatusOK, resp.StatusCode, body)
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData([]byte(body))
	require.NoError(t, err)
	require.NoError(t, doc.Validate(loader.Context))
	doc.Servers = openapi3.Servers{{URL: s.url}}
	router, err := legacyrouter.NewRouter(doc)
	require.NoError(t, err)
	require.Contains(t, doc.Components.SecuritySchemes, "basicAuth")
	require.Contains(t, doc.Components.SecuritySchemes, "bearerAuth")

	for _, x := range []struct {
		method, path, authorization string
		status                      int
	}{
		{http.MethodGet, "/connectors", "", http.StatusUnauthorized},
		{http.MethodGet, "/connectors", basicAuth("bob", "wrong"), http.StatusUnauthorized},
		{http.MethodPut, "/connectors/c/pause", basicAuth("bob", "bob-pw"), http.StatusForbidden},
		{http.MethodDelete, "/connectors/c", "Bearer " + s.token, http.StatusForbidden},
		{http.MethodGet, "/health", "", 0}, // open: 200, or 503 while starting
	} {
		resp, body := s.send(x.method, x.path, x.authorization, nil)
		if x.status != 0 {
			require.Equal(t, x.status, resp.StatusCode, "%s %s: %s", x.method, x.path, body)
		}
		req, err := http.NewRequest(x.method, s.url+x.path, nil)
		require.NoError(t, err)
		route, params, err := router.FindRoute(req)
		require.NoError(t, err)
		in := &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
			Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true}}
		require.NoError(t, openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header, Body: io.NopCloser(strings.NewReader(body)),
		}), "%s %s: answer %d %s", x.method, x.path, resp.StatusCode, body)
	}
}
