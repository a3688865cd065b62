package main

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/auth"
)

// passwd runs kmirror passwd with args and stdin, and returns stdout and stderr.
func passwd(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	var out, errOut bytes.Buffer
	err := newPasswdCommand(strings.NewReader(stdin), &out, &errOut).ParseAndRun(context.Background(), args)
	return out.String(), errOut.String(), err
}

// TestPasswdLinesAuthenticate runs the commands of docs/security.md and uses their output as a users file.
func TestPasswdLinesAuthenticate(t *testing.T) {
	t.Parallel()
	admin, _, err := passwd(t, "s3cret\n", "--role", "admin", "alice")
	require.NoError(t, err)
	require.Regexp(t, `^alice:admin:\$2a\$12\$\S{53}\n$`, admin)
	reader, _, err := passwd(t, "r3ad\n", "--scheme", "argon2id", "bob")
	require.NoError(t, err)
	require.Regexp(t, `^bob:read-only:\$argon2id\$v=19\$m=65536,t=3,p=4\$\S+\n$`, reader, "read-only unless told otherwise")
	tokenLine, token, err := passwd(t, "", "--token", "--role", "read-only", "prometheus")
	require.NoError(t, err)
	token = strings.TrimSpace(token)
	require.Regexp(t, `^kmirror_[A-Za-z0-9_-]{43}$`, token)
	require.Equal(t, "prometheus:read-only:"+auth.TokenHash(token)+"\n", tokenLine)

	file := filepath.Join(t.TempDir(), "users")
	require.NoError(t, os.WriteFile(file, []byte(admin+reader+tokenLine), 0o600))
	a, err := auth.New(auth.Config{UsersFile: file})
	require.NoError(t, err)
	srv := httptest.NewServer(a.Authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		_, _ = w.Write([]byte(p.Name + " " + p.Role.String()))
	})))
	defer srv.Close()
	for header, want := range map[string]string{
		basic("alice", "s3cret"): "alice admin", basic("bob", "r3ad"): "bob read-only", "Bearer " + token: "prometheus read-only",
	} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Authorization", header)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, want)
		require.Equal(t, want, body.String())
	}
}

func basic(user, password string) string {
	r, _ := http.NewRequest(http.MethodGet, "http://x", nil)
	r.SetBasicAuth(user, password)
	return r.Header.Get("Authorization")
}

func TestPasswdErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{"", []string{"alice"}, "no password on stdin: pipe one in"},
		{"x\n", []string{}, "kmirror passwd takes one NAME"},
		{"x\n", []string{"--role", "root", "alice"}, `--role: role "root" is neither admin nor read-only`},
		{"x\n", []string{"--scheme", "md5", "alice"}, `hash the password: hash scheme "md5" is neither bcrypt nor argon2id`},
		{"x\n", []string{"al ice"}, `name "al ice" holds a space`},
		{"x\n", []string{"al:ice"}, `name "al:ice" holds a colon`},
		{strings.Repeat("x", 73) + "\n", []string{"alice"}, "hash the password: bcrypt: "},
	} {
		_, _, err := passwd(t, tc.stdin, tc.args...)
		require.ErrorContains(t, err, tc.want, "%v", tc.args)
	}
}
