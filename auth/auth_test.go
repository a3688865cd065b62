package auth_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/crypto/bcrypt"

	"github.com/kmirror/kmirror/auth"
)

// fixture is a users file with an admin, a read-only user (argon2id) and a read-only bearer token, and an
// Authenticator serving a handler that echoes the principal.
type fixture struct {
	t     *testing.T
	file  string
	srv   *httptest.Server
	token string
	logs  *logRecorder
}

// logRecorder keeps the messages logged, so a test can await one instead of sleeping.
type logRecorder struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logRecorder) Enabled(context.Context, slog.Level) bool { return true }
func (l *logRecorder) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Level.String()+" "+r.Message)
	return nil
}
func (l *logRecorder) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logRecorder) WithGroup(string) slog.Handler      { return l }

func (l *logRecorder) count(msg string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, m := range l.msgs {
		if m == msg {
			n++
		}
	}
	return n
}

func bcryptHash(t *testing.T, password string) string {
	t.Helper()
	// MinCost: the test checks the format and the comparison, not the work factor.
	h, err := bcrypt.GenerateFromPassword([]byte(password), bcrypt.MinCost)
	require.NoError(t, err)
	return string(h)
}

func writeUsers(t *testing.T, file string, lines ...string) {
	t.Helper()
	// Write a new file and rename it over the old one, as editors and configuration tools do.
	tmp := file + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(strings.Join(lines, "\n")+"\n"), 0o600))
	require.NoError(t, os.Rename(tmp, file))
}

// bobHash is argon2id at small parameters: every refused password also pays for a decoy of each scheme the
// file uses, and kmirror passwd's parameters (64 MiB, 3 passes; TestHashPasswordVerifies) would make each
// refusal in these tests take a good part of a second.
var bobHash = sync.OnceValues(func() (string, error) {
	line := argon2idLine("bob", "r3ader", 1024, 1)
	return line[strings.LastIndex(line, ":")+1:], nil
})

func newFixture(t *testing.T) *fixture {
	t.Helper()
	argon, err := bobHash()
	require.NoError(t, err)
	token, tokenHash, err := auth.NewToken()
	require.NoError(t, err)
	f := &fixture{t: t, file: filepath.Join(t.TempDir(), "users"), token: token, logs: &logRecorder{}}
	writeUsers(t, f.file,
		"# operators",
		"alice:admin:"+bcryptHash(t, "s3cret"),
		"",
		"bob:read-only:"+argon,
		"prometheus:read-only:"+tokenHash)
	a, err := auth.New(auth.Config{UsersFile: f.file, ReloadInterval: 20 * time.Millisecond, Logger: slog.New(f.logs),
		Open:         func(r *http.Request) bool { return r.URL.Path == "/health" },
		FailureBurst: 1000}) // the failure budget has tests of its own (limits_test.go)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { a.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.FromContext(r.Context())
		if !ok {
			_, _ = io.WriteString(w, "open")
			return
		}
		_, _ = io.WriteString(w, p.Name+" "+p.Role.String()+" "+p.Method)
	})
	open := func(r *http.Request) bool { return r.URL.Path == "/health" }
	f.srv = httptest.NewServer(a.Authenticate(auth.Authorize(open)(echo)))
	t.Cleanup(f.srv.Close)
	return f
}

// send returns the status, the body and the response of method path with the given Authorization header.
func (f *fixture) send(method, path, authorization string) (int, string, *http.Response) {
	f.t.Helper()
	req, err := http.NewRequest(method, f.srv.URL+path, nil)
	require.NoError(f.t, err)
	if authorization != "" {
		req.Header.Set("Authorization", authorization)
	}
	resp, err := f.srv.Client().Do(req)
	require.NoError(f.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(f.t, err)
	return resp.StatusCode, string(b), resp
}

func basic(user, password string) string {
	req, _ := http.NewRequest(http.MethodGet, "http://x", nil)
	req.SetBasicAuth(user, password)
	return req.Header.Get("Authorization")
}

func TestRefusedRequestsGetConnectsAnswer(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for name, header := range map[string]string{
		"no credentials":    "",
		"wrong password":    basic("alice", "guess"),
		"unknown user":      basic("mallory", "s3cret"),
		"not base64":        "Basic !!!",
		"no colon":          "Basic YWxpY2U=",
		"empty user":        basic("", "s3cret"),
		"unknown token":     "Bearer kmirror_nope",
		"unknown scheme":    "Digest username=alice",
		"password as token": "Bearer s3cret",
	} {
		code, body, resp := f.send(http.MethodGet, "/connectors", header)
		require.Equal(t, http.StatusUnauthorized, code, name)
		require.Equal(t, "User cannot access the resource.", body, "%s: Connect's body, word for word", name)
		require.Equal(t, "text/plain; charset=utf-8", resp.Header.Get("Content-Type"), name)
		require.Equal(t, []string{`Basic realm="kmirror", charset="UTF-8"`, `Bearer realm="kmirror"`},
			resp.Header.Values("WWW-Authenticate"), name)
	}
}

func TestRolesAndOpenPaths(t *testing.T) {
	t.Parallel()
	f := newFixture(t)

	code, body, _ := f.send(http.MethodGet, "/health", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "open", body, "/health needs no credentials")
	code, _, _ = f.send(http.MethodGet, "/health", basic("alice", "wrong"))
	require.Equal(t, http.StatusOK, code, "an open path ignores bad credentials: a probe must not fail on them")

	code, body, _ = f.send(http.MethodGet, "/connectors", basic("alice", "s3cret"))
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "alice admin basic", body)
	code, body, _ = f.send(http.MethodGet, "/connectors", "basic "+strings.TrimPrefix(basic("alice", "s3cret"), "Basic "))
	require.Equal(t, http.StatusOK, code, "the scheme is case-insensitive, as in Connect: %s", body)
	code, _, _ = f.send(http.MethodDelete, "/connectors/x", basic("alice", "s3cret"))
	require.Equal(t, http.StatusOK, code, "admin may write")

	code, body, _ = f.send(http.MethodGet, "/connectors", basic("bob", "r3ader"))
	require.Equal(t, http.StatusOK, code, "argon2id")
	require.Equal(t, "bob read-only basic", body)
	code, _, _ = f.send(http.MethodHead, "/connectors", basic("bob", "r3ader"))
	require.Equal(t, http.StatusOK, code)

	code, body, _ = f.send(http.MethodGet, "/metrics", "Bearer "+f.token)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "prometheus read-only bearer", body)

	for _, method := range []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		for who, header := range map[string]string{"bob": basic("bob", "r3ader"), "prometheus": "Bearer " + f.token} {
			code, body, resp := f.send(method, "/connectors/a%2Fb/pause", header)
			require.Equal(t, http.StatusForbidden, code, "%s %s", who, method)
			require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
			var e struct {
				ErrorCode int    `json:"error_code"`
				Message   string `json:"message"`
			}
			require.NoError(t, json.Unmarshal([]byte(body), &e), body)
			require.Equal(t, http.StatusForbidden, e.ErrorCode)
			require.Equal(t, "User "+who+" has the read-only role, which may only read (GET); "+method+
				" /connectors/a%2Fb/pause needs the admin role", e.Message)
		}
	}
}

func TestBrowserCrossOriginWritesRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	req, err := http.NewRequest(http.MethodDelete, f.srv.URL+"/connectors/x", nil)
	require.NoError(t, err)
	req.SetBasicAuth("alice", "s3cret")
	req.Header.Set("Sec-Fetch-Site", "cross-site")
	resp, err := f.srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "a browser's cached password must not serve another site's page")
}

func TestUsersFileReloads(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	status := func(header string) int {
		code, _, _ := f.send(http.MethodGet, "/connectors", header)
		return code
	}
	require.Equal(t, http.StatusOK, status(basic("alice", "s3cret")))

	// A new password for alice, carol added, bob and the token gone.
	writeUsers(t, f.file, "alice:admin:"+bcryptHash(t, "n3w"), "carol:read-only:"+bcryptHash(t, "c"))
	require.Eventually(t, func() bool { return status(basic("carol", "c")) == http.StatusOK }, 5*time.Second, 10*time.Millisecond,
		"carol is let in once the file changed")
	require.Equal(t, http.StatusUnauthorized, status(basic("alice", "s3cret")), "the old password was cached: a reload forgets it")
	require.Equal(t, http.StatusOK, status(basic("alice", "n3w")))
	require.Equal(t, http.StatusUnauthorized, status(basic("bob", "r3ader")))
	require.Equal(t, http.StatusUnauthorized, status("Bearer "+f.token))

	// A broken version keeps the previous users; fixing it takes effect.
	writeUsers(t, f.file, "alice:root:"+bcryptHash(t, "x"))
	const broken = "ERROR the REST users file changed but does not parse; still using its previous version"
	require.Eventually(t, func() bool { return f.logs.count(broken) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, http.StatusOK, status(basic("carol", "c")), "a users file that does not parse keeps the previous users")
	writeUsers(t, f.file, "dave:admin:"+bcryptHash(t, "d"))
	require.Eventually(t, func() bool { return status(basic("dave", "d")) == http.StatusOK }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, http.StatusUnauthorized, status(basic("carol", "c")))
	require.Equal(t, 1, f.logs.count(broken), "a broken version is reported once, not once per poll")
}

func TestFailedAuthenticationLogsAreRateLimited(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for range 20 {
		f.send(http.MethodGet, "/connectors", basic("alice", "guess"))
	}
	require.Equal(t, 1, f.logs.count("WARN REST authentication failed"), "20 wrong passwords for one user: one line per minute")
	f.send(http.MethodGet, "/connectors", basic("bob", "guess"))
	require.Equal(t, 2, f.logs.count("WARN REST authentication failed"), "a wrong password for another user is logged at once")
	for i := range 20 {
		f.send(http.MethodGet, "/connectors", basic(fmt.Sprintf("made-up-%d", i), "guess"))
		f.send(http.MethodGet, "/connectors", fmt.Sprintf("Scheme%d x", i))
	}
	require.Equal(t, 4, f.logs.count("WARN REST authentication failed"),
		"made-up names and schemes: one line per reason, however many the client invents")
}

func TestUsersFileErrorsNameTheLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ content, want string }{
		{"alice:admin", "line 1: want name:role:hash, got 2 field(s)"},
		{"# c\nalice:root:$2a$04$x", `line 2 (alice): role "root" is neither admin nor read-only`},
		{"alice:admin:plaintext", "line 1 (alice): the hash is neither bcrypt"},
		{"alice:admin:$2a$04$short", "line 1 (alice): bcrypt hash:"},
		{"t:admin:sha256:abc", "line 1 (t): a bearer token's hash is sha256: and 64 hex digits"},
		{"a b:admin:sha256:abc", `line 1: name "a b" holds a space`},
		{":admin:x", "line 1: the name is empty"},
		{"x:admin:$argon2id$v=19$m=99999999,t=3,p=4$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5", "out of range"},
		{"x:admin:$argon2id$v=16$m=65536,t=3,p=4$c2FsdHNhbHQ$a2V5a2V5a2V5a2V5a2V5a2V5", `version "v=16" is not v=19`},
		{"x:admin:sha256:" + strings.Repeat("0", 64) + "\nx:read-only:sha256:" + strings.Repeat("1", 64), `line 2: "x" is already defined on line 1`},
	} {
		file := filepath.Join(dir, "users")
		require.NoError(t, os.WriteFile(file, []byte(tc.content), 0o600))
		_, err := auth.New(auth.Config{UsersFile: file})
		require.ErrorContains(t, err, "users file "+file+" ", tc.content)
		require.ErrorContains(t, err, tc.want, tc.content)
	}
	_, err := auth.New(auth.Config{UsersFile: filepath.Join(dir, "missing")})
	require.ErrorContains(t, err, "users file: read "+filepath.Join(dir, "missing"))
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestHashPasswordVerifies(t *testing.T) {
	t.Parallel()
	for _, scheme := range []auth.Scheme{auth.Bcrypt, auth.Argon2id} {
		h, err := auth.HashPassword("pa:ss wörd", scheme)
		require.NoError(t, err)
		line, err := auth.Entry("erin", auth.RoleAdmin, h)
		require.NoError(t, err)
		file := filepath.Join(t.TempDir(), "users")
		require.NoError(t, os.WriteFile(file, []byte(line+"\n"), 0o600))
		a, err := auth.New(auth.Config{UsersFile: file})
		require.NoError(t, err)
		srv := httptest.NewServer(a.Authenticate(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})))
		for password, want := range map[string]int{"pa:ss wörd": http.StatusOK, "pa:ss word": http.StatusUnauthorized} {
			req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
			req.SetBasicAuth("erin", password)
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, want, resp.StatusCode, "%s with %q", scheme, password)
		}
		srv.Close()
	}
	_, err := auth.HashPassword("x", "md5")
	require.ErrorContains(t, err, `hash scheme "md5" is neither bcrypt nor argon2id`)
	_, err = auth.HashPassword(strings.Repeat("x", 73), auth.Bcrypt)
	require.ErrorContains(t, err, "bcrypt: ")
}
