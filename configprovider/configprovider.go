package configprovider

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/kmirror/kmirror/fileaccess"
)

// Provider names, as references spell them and --config-providers lists them.
const (
	Env       = "env"
	File      = "file"
	Directory = "directory"
)

// Names are the providers kmirror has, in the order they are documented.
var Names = []string{Env, File, Directory}

// ownEnvPrefix marks kmirror's own settings in the environment, which the env provider never reads.
const ownEnvPrefix = "KMIRROR_"

// referencePattern is ConfigTransformer.DEFAULT_PATTERN: ${provider:[path:]key}. The lazy groups make the
// provider end at the first colon and the path at the second, so a key may contain colons but a path may not.
var referencePattern = regexp.MustCompile(`\$\{([^}]*?):(([^}]*?):)?([^}]*?)\}`)

// Config is the worker's provider configuration.
type Config struct {
	// Enabled names the providers references may use (--config-providers). None by default.
	Enabled []string
	// AllowedPaths are the directories the file and directory providers may read from
	// (--config-provider-allowed-paths). Required when either is enabled.
	AllowedPaths fileaccess.Allowlist
	// EnvAllowlist is a regular expression that must match (somewhere) in an environment variable's name
	// for the env provider to read it (EnvVarConfigProvider's allowlist.pattern, matched as Java's
	// Pattern.asPredicate does). Empty allows every variable but kmirror's own (KMIRROR_*).
	EnvAllowlist string
	// LookupEnv reads an environment variable; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

// Providers resolves references. A nil *Providers has no provider enabled.
type Providers struct {
	enabled   map[string]bool
	paths     fileaccess.Allowlist
	env       *regexp.Regexp
	lookupEnv func(string) (string, bool)
}

// New checks cfg and returns its providers.
func New(cfg Config) (*Providers, error) {
	p := &Providers{enabled: map[string]bool{}, paths: cfg.AllowedPaths, lookupEnv: cfg.LookupEnv}
	for _, name := range cfg.Enabled {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		if !slices.Contains(Names, name) {
			return nil, fmt.Errorf("--config-providers: unknown provider %q: use %s", name, strings.Join(Names, ", "))
		}
		p.enabled[name] = true
	}
	if (p.enabled[File] || p.enabled[Directory]) && len(cfg.AllowedPaths.Dirs()) == 0 {
		return nil, errors.New("--config-providers: the file and directory providers need --config-provider-allowed-paths " +
			"(without it they could read any file kmirror can)")
	}
	if cfg.EnvAllowlist != "" {
		re, err := regexp.Compile(cfg.EnvAllowlist)
		if err != nil {
			return nil, fmt.Errorf("--config-provider-env-allowlist: %w", err)
		}
		p.env = re
	}
	if p.lookupEnv == nil {
		p.lookupEnv = os.LookupEnv
	}
	return p, nil
}

// Enabled lists the enabled providers, sorted.
func (p *Providers) Enabled() []string {
	if p == nil {
		return nil
	}
	var out []string
	for n := range p.enabled {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Reference is one ${provider:[path:]key} in a value.
type Reference struct {
	// Text is the reference as written, e.g. "${file:/etc/kmirror/secrets.properties:password}".
	Text     string
	Provider string
	Path     string
	Key      string
}

// References lists the references in a value, in order.
func References(value string) []Reference {
	var out []Reference
	for _, m := range referencePattern.FindAllStringSubmatch(value, -1) {
		out = append(out, Reference{Text: m[0], Provider: m[1], Path: m[3], Key: m[4]})
	}
	return out
}

// HasReference reports whether a value holds at least one reference.
func HasReference(value string) bool {
	return strings.Contains(value, "${") && referencePattern.MatchString(value)
}

// Error is a reference that cannot be used. Its text names the reference, never a resolved value.
type Error struct {
	Ref Reference
	Msg string
	// Err is the underlying cause, if any (a file that cannot be read); its text names paths only.
	Err error
}

func (e *Error) Error() string {
	msg := e.Ref.Text + ": " + e.Msg
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

func (e *Error) Unwrap() error { return e.Err }

// Check validates the references of a value without reading anything: well formed, provider enabled, path
// shaped as the provider wants it and, for files, inside the allowed paths (checked lexically and through
// links that already exist, as fileaccess does). It returns the first problem.
func (p *Providers) Check(value string) error {
	for _, ref := range References(value) {
		if err := p.check(ref); err != nil {
			return err
		}
	}
	return nil
}

func (p *Providers) check(ref Reference) error {
	fail := func(format string, args ...any) error { return &Error{Ref: ref, Msg: fmt.Sprintf(format, args...)} }
	if !slices.Contains(Names, ref.Provider) {
		return fail("unknown config provider %q: kmirror has %s", ref.Provider, strings.Join(Names, ", "))
	}
	if p == nil || !p.enabled[ref.Provider] {
		enabled := "none is"
		if e := p.Enabled(); len(e) > 0 {
			enabled = strings.Join(e, ", ") + " only"
		}
		return fail("the %s config provider is not enabled on this worker (--config-providers: %s)", ref.Provider, enabled)
	}
	if ref.Key == "" {
		return fail("no key after the path")
	}
	switch ref.Provider {
	case Env:
		if ref.Path != "" {
			// EnvVarConfigProvider's own rule and wording.
			return fail("Path is not supported for EnvVarConfigProvider, invalid value '%s'", ref.Path)
		}
		if !p.envAllowed(ref.Key) {
			// Decided by the name alone, so saying so reveals nothing about the environment.
			return fail("the env config provider may not read %s (--config-provider-env-allowlist; KMIRROR_* never)", ref.Key)
		}
	case File, Directory:
		if !filepath.IsAbs(ref.Path) {
			return fail("the path must be absolute: ${%s:/absolute/path:%s}", ref.Provider, ref.Key)
		}
		if _, err := p.paths.Check(ref.Path); err != nil {
			return fail("the path is outside the directories config providers may read (%s)", p.paths.Describe())
		}
		if ref.Provider == Directory && (strings.ContainsRune(ref.Key, '/') || ref.Key == "." || ref.Key == "..") {
			return fail("the key must be the name of a file directly in the directory")
		}
	}
	return nil
}

// envAllowed applies the allowlist to a variable name: kmirror's own never, then the pattern if one is set.
func (p *Providers) envAllowed(name string) bool {
	if strings.HasPrefix(strings.ToUpper(name), ownEnvPrefix) {
		return false
	}
	return p.env == nil || p.env.MatchString(name)
}
