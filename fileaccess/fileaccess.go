// Package fileaccess decides which files a connector config may make kmirror read: the key and trust stores
// and CA files of client settings (--allowed-file-dirs) and the files of the file and directory config
// providers (--config-provider-allowed-paths).
//
// Anyone who may write a connector config may name a path in it, and kmirror reads that path (to learn a key
// store's format, to read a properties file) or hands it to librdkafka, which opens it. Without a limit a
// config could read any file kmirror can, and tell from the error whether a file exists and what it holds. So
// a path is accepted only inside directories the operator chose, and the error for any other path is one
// fixed text, decided without opening, stat-ing or resolving anything outside those directories.
//
// A path is made absolute (relative paths are kmirror's working directory's, as librdkafka would read them)
// and cleaned, so ".." cannot climb out; then its symbolic links are resolved, so a link inside an allowed
// directory cannot point out of it. The check is made again each time a client is built, but a file swapped
// for a link between the check and librdkafka's open is not caught: the allowed directories are the
// operator's, and whoever can write into them is trusted.
package fileaccess

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// ErrNotAllowed is the error for a path outside the allowed directories.
var ErrNotAllowed = errors.New("not allowed")

// Allowlist is a set of directories whose files (at any depth) may be read. The zero value allows none.
type Allowlist struct {
	// dirs are absolute, cleaned and free of symbolic links.
	dirs []string
	// named are the same directories as the operator named them, made absolute and cleaned: a path given
	// through the same link as the directory passes the lexical check, and is then resolved.
	named []string
	// flag names the setting that chose dirs, for error messages ("--allowed-file-dirs").
	flag string
}

// New returns the allowlist of dirs, named in errors after flag (e.g. "--allowed-file-dirs"). Relative
// directories are taken from the working directory. A directory that does not exist is an error unless
// mayBeMissing: kmirror's default secrets/ need not exist, a directory the operator named must.
func New(flag string, dirs []string, mayBeMissing bool) (Allowlist, error) {
	a := Allowlist{flag: flag}
	for _, d := range dirs {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		abs, err := filepath.Abs(d)
		if err != nil {
			return Allowlist{}, fmt.Errorf("%s: %s: %w", flag, d, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		switch {
		case err == nil:
			info, err := os.Stat(real)
			if err != nil {
				return Allowlist{}, fmt.Errorf("%s: %w", flag, err)
			}
			if !info.IsDir() {
				return Allowlist{}, fmt.Errorf("%s: %s is not a directory", flag, d)
			}
		case errors.Is(err, fs.ErrNotExist) && mayBeMissing:
			// Checked lexically until it exists; resolve still follows links once it does.
			real = abs
		default:
			return Allowlist{}, fmt.Errorf("%s: directory %s: %w", flag, d, err)
		}
		a.dirs = append(a.dirs, real)
		a.named = append(a.named, abs)
	}
	return a, nil
}

// Dirs returns the allowed directories as checked: absolute, cleaned, links resolved.
func (a Allowlist) Dirs() []string { return append([]string(nil), a.dirs...) }

// Describe names the allowed directories for an error message: "--allowed-file-dirs: /a, /b", or says that
// none is allowed.
func (a Allowlist) Describe() string {
	if len(a.dirs) == 0 {
		return "no directory is allowed (" + a.flagName() + " is empty)"
	}
	return a.flagName() + ": " + strings.Join(a.dirs, ", ")
}

func (a Allowlist) flagName() string {
	if a.flag == "" {
		return "allowed directories"
	}
	return a.flag
}

// Check returns the path to open when path lies inside an allowed directory, and an error wrapping
// ErrNotAllowed otherwise. The error is the same whether the file exists or not and whatever it is; nothing
// outside the allowed directories is touched to decide.
func (a Allowlist) Check(path string) (string, error) {
	notAllowed := fmt.Errorf("%w: %s", ErrNotAllowed, a.Describe())
	if path == "" || strings.ContainsRune(path, 0) {
		return "", notAllowed
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", notAllowed
	}
	// First lexically: a path outside every directory is refused before the file system is asked anything.
	if !within(abs, a.dirs) && !within(abs, a.named) {
		return "", notAllowed
	}
	real, err := resolveLinks(abs)
	if err != nil || !within(real, a.dirs) {
		return "", notAllowed
	}
	return abs, nil
}

// within reports whether p is one of dirs or lies beneath one.
func within(p string, dirs []string) bool {
	for _, d := range dirs {
		if p == d || strings.HasPrefix(p, d+string(filepath.Separator)) || d == string(filepath.Separator) {
			return true
		}
	}
	return false
}

// resolveLinks is filepath.EvalSymlinks for a path that may not exist yet: the longest existing prefix is
// resolved and the rest appended, so that a missing file below a link that leaves the directory is refused
// exactly like an existing one (otherwise the two errors would tell them apart).
func resolveLinks(abs string) (string, error) {
	rest := ""
	p := abs
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(p)
		if parent == p {
			return "", err
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
