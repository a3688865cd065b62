package configprovider

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxFileSize bounds what one provider file may hold: properties files and secret files are small, and a
// reference to /dev/zero or a huge log inside an allowed directory must not exhaust memory.
const maxFileSize = 1 << 20

// Resolution resolves the references of one client's settings, reading each file once, so that every key
// taken from one properties file comes from the same version of it.
type Resolution struct {
	p     *Providers
	files map[string]fileResult
	found []string // every value a reference resolved to, for Found
}

type fileResult struct {
	props map[string]string
	err   error
}

// Begin starts a resolution.
func (p *Providers) Begin() *Resolution { return &Resolution{p: p, files: map[string]fileResult{}} }

// Resolve returns value with every reference replaced by what its provider holds. A reference that cannot
// be resolved is an *Error; nothing of what was read appears in it.
func (r *Resolution) Resolve(value string) (string, error) {
	refs := referencePattern.FindAllStringSubmatchIndex(value, -1)
	if len(refs) == 0 {
		return value, nil
	}
	var b strings.Builder
	last := 0
	for _, m := range refs {
		ref := Reference{Text: value[m[0]:m[1]], Provider: value[m[2]:m[3]], Key: value[m[8]:m[9]]}
		if m[6] >= 0 {
			ref.Path = value[m[6]:m[7]]
		}
		if err := r.p.check(ref); err != nil {
			return "", err
		}
		v, err := r.lookup(ref)
		if err != nil {
			return "", err
		}
		r.found = append(r.found, v)
		b.WriteString(value[last:m[0]])
		b.WriteString(v)
		last = m[1]
	}
	b.WriteString(value[last:])
	return b.String(), nil
}

// Found returns every value a reference has resolved to so far, each on its own: a reference inside a longer
// text (a JAAS line's password) is a secret of its own.
func (r *Resolution) Found() []string { return r.found }

func (r *Resolution) lookup(ref Reference) (string, error) {
	switch ref.Provider {
	case Env:
		return r.env(ref)
	case File:
		return r.file(ref)
	case Directory:
		return r.directory(ref)
	}
	return "", &Error{Ref: ref, Msg: "unknown config provider"}
}

func (r *Resolution) env(ref Reference) (string, error) {
	// check has applied the allowlist.
	v, ok := r.p.lookupEnv(ref.Key)
	if !ok {
		return "", &Error{Ref: ref, Msg: fmt.Sprintf("environment variable %s is not set", ref.Key)}
	}
	return v, nil
}

func (r *Resolution) file(ref Reference) (string, error) {
	res, ok := r.files[ref.Path]
	if !ok {
		data, err := r.readAllowed(ref.Path)
		if err == nil {
			res.props, err = parseProperties(data)
		}
		res.err = err
		r.files[ref.Path] = res
	}
	if res.err != nil {
		return "", &Error{Ref: ref, Msg: "the file config provider cannot read the properties file", Err: res.err}
	}
	v, ok := res.props[ref.Key]
	if !ok {
		return "", &Error{Ref: ref, Msg: fmt.Sprintf("no key %s in %s (file config provider)", ref.Key, ref.Path)}
	}
	return v, nil
}

func (r *Resolution) directory(ref Reference) (string, error) {
	path := filepath.Join(ref.Path, ref.Key)
	info, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist), err == nil && !info.Mode().IsRegular():
		// DirectoryConfigProvider reads regular files only and ignores the rest.
		return "", &Error{Ref: ref, Msg: fmt.Sprintf("no file %s in %s (directory config provider)", ref.Key, ref.Path)}
	case err != nil:
		return "", &Error{Ref: ref, Msg: "the directory config provider cannot read the file", Err: err}
	}
	data, err := r.readAllowed(path)
	if err != nil {
		return "", &Error{Ref: ref, Msg: "the directory config provider cannot read the file", Err: err}
	}
	// As Java, the content as it is: a trailing newline stays.
	return string(data), nil
}

// readAllowed reads a file once its path, links resolved, is known to be allowed (check has tested the path
// as written; a link below it may still lead out).
func (r *Resolution) readAllowed(path string) ([]byte, error) {
	real, err := r.p.paths.Check(path)
	if err != nil {
		return nil, err
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if len(data) > maxFileSize {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, maxFileSize)
	}
	return data, nil
}
