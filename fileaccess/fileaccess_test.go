package fileaccess

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCheck(t *testing.T) {
	root := t.TempDir()
	allowed := filepath.Join(root, "secrets")
	outside := filepath.Join(root, "outside")
	for _, d := range []string{allowed, outside, filepath.Join(allowed, "sub")} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	require.NoError(t, os.WriteFile(filepath.Join(allowed, "ca.pem"), []byte("x"), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(outside, "passwd"), []byte("x"), 0o600))
	require.NoError(t, os.Symlink(outside, filepath.Join(allowed, "escape")))
	require.NoError(t, os.Symlink(filepath.Join(outside, "passwd"), filepath.Join(allowed, "passwd-link")))
	require.NoError(t, os.Symlink(filepath.Join(allowed, "ca.pem"), filepath.Join(allowed, "sub", "inner-link")))

	a, err := New("--allowed-file-dirs", []string{allowed}, false)
	require.NoError(t, err)

	for _, ok := range []string{
		filepath.Join(allowed, "ca.pem"),
		filepath.Join(allowed, "sub", "inner-link"),
		filepath.Join(allowed, "sub", "..", "ca.pem"),
		filepath.Join(allowed, "not-yet-there.pem"), // inside: librdkafka's own error says it is missing
	} {
		_, err := a.Check(ok)
		require.NoError(t, err, ok)
	}

	var msgs []string
	for _, bad := range []string{
		filepath.Join(outside, "passwd"), // exists
		filepath.Join(outside, "nope"),   // does not
		outside,                          // a directory
		filepath.Join(allowed, "..", "outside", "passwd"), // climbs out
		filepath.Join(allowed, "escape", "passwd"),        // through a link to a directory outside
		filepath.Join(allowed, "escape", "nope"),          // the same, to a file that does not exist
		filepath.Join(allowed, "passwd-link"),             // a link to a file outside
		allowed + "-sibling/x",                            // a prefix of the name is not the directory
		"/etc/shadow",
		"",
		"relative/../../x",
	} {
		_, err := a.Check(bad)
		require.ErrorIs(t, err, ErrNotAllowed, bad)
		msgs = append(msgs, err.Error())
	}
	for _, m := range msgs {
		require.Equal(t, msgs[0], m, "one text, whatever the path is or holds")
	}
	require.Equal(t, "not allowed: --allowed-file-dirs: "+a.Dirs()[0], msgs[0])
}

func TestNew(t *testing.T) {
	root := t.TempDir()
	_, err := New("--allowed-file-dirs", []string{filepath.Join(root, "missing")}, false)
	require.ErrorContains(t, err, "--allowed-file-dirs")

	a, err := New("--allowed-file-dirs", []string{filepath.Join(root, "missing")}, true)
	require.NoError(t, err, "kmirror's default secrets/ need not exist")
	_, err = a.Check(filepath.Join(root, "missing", "x"))
	require.NoError(t, err)

	file := filepath.Join(root, "f")
	require.NoError(t, os.WriteFile(file, nil, 0o600))
	_, err = New("--allowed-file-dirs", []string{file}, false)
	require.ErrorContains(t, err, "is not a directory")

	// An allowed directory reached through a link is checked as where it really is.
	real := filepath.Join(root, "real")
	require.NoError(t, os.Mkdir(real, 0o700))
	require.NoError(t, os.Symlink(real, filepath.Join(root, "link")))
	a, err = New("x", []string{filepath.Join(root, "link")}, false)
	require.NoError(t, err)
	_, err = a.Check(filepath.Join(real, "f"))
	require.NoError(t, err)
	_, err = a.Check(filepath.Join(root, "link", "f"))
	require.NoError(t, err)

	var zero Allowlist
	_, err = zero.Check(file)
	require.True(t, errors.Is(err, ErrNotAllowed))
	require.Contains(t, err.Error(), "no directory is allowed")
}
