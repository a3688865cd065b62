package mm2file

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/kmirror/kmirror/configprovider"
	"github.com/kmirror/kmirror/connectors/configdef"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// Keys of the file that MirrorMakerConfig itself reads, and the connector keys it sets.
const (
	keyClusters          = "clusters"
	keyInternalRest      = "dedicated.mode.enable.internal.rest"
	keyConfigProviders   = "config.providers"
	keyReplicationPolicy = "replication.policy"
	keyBootstrapServers  = "bootstrap.servers"
	keySecurityProtocol  = "security.protocol"
	keyEnabled           = mirrorconfig.EnabledConfig
	keyEmitHeartbeats    = mirrorconfig.EmitHeartbeatsEnabledConfig
	keyName              = mirrorconfig.NameConfig
	keyConnectorClass    = mirrorconfig.ConnectorClassConfig
	keySourceAlias       = mirrorconfig.SourceClusterAliasConfig
	keyTargetAlias       = mirrorconfig.TargetClusterAliasConfig
)

// KeyTakeover is kmirror's own key of the file (MM2 ignores it, as it reaches no connector): false switches off
// taking over Java MM2's source offsets when a flow's source connector is first declared.
const KeyTakeover = "kmirror.mm2.takeover"

// flowSeparator joins the aliases of a flow, in "A->B.key" and in connector names.
const flowSeparator = "->"

// ErrNoFlows is MirrorMaker's error when no herder is left to run.
var ErrNoFlows = errors.New("No source->target replication flows.") //nolint:staticcheck // MM2's own text

// File is a parsed dedicated-mode configuration.
type File struct {
	// Path is where the file was read from; messages and the declared marker name it.
	Path     string
	props    map[string]string
	lines    map[string]int
	clusters []string
}

// Load reads and parses the file at path.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mm2 properties: %w", err)
	}
	return Parse(path, data)
}

// Parse parses data, the content of the file at path, and checks what MirrorMakerConfig checks.
func Parse(path string, data []byte) (*File, error) {
	entries, err := configprovider.ReadProperties(latin1(data))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f := &File{Path: path, props: make(map[string]string, len(entries)), lines: make(map[string]int, len(entries))}
	for _, e := range entries {
		f.props[e.Key] = e.Value
		f.lines[e.Key] = e.Line
	}
	if err := f.check(); err != nil {
		return nil, err
	}
	return f, nil
}

// latin1 decodes data as ISO-8859-1, the encoding Properties.load(InputStream) reads, into UTF-8.
func latin1(data []byte) []byte {
	out := make([]byte, 0, len(data))
	for _, b := range data {
		out = utf8.AppendRune(out, rune(b))
	}
	return out
}

// check validates the keys MirrorMakerConfig defines, with Java's messages, and the aliases.
func (f *File) check() error {
	def := fileDef()
	for _, cv := range def.Validate(f.pointers(def)) {
		if len(cv.Errors) > 0 {
			return f.errorAt(cv.Name, "%s", cv.Errors[0])
		}
	}
	if v, ok := f.props[KeyTakeover]; ok && !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
		return f.errorAt(KeyTakeover, "%q is not true or false", v)
	}
	seen := map[string]bool{}
	for _, alias := range configdef.SplitList(f.props[keyClusters]) {
		switch {
		case alias == "":
			return f.errorAt(keyClusters, "an empty cluster alias in %q", f.props[keyClusters])
		case strings.Contains(alias, flowSeparator):
			return f.errorAt(keyClusters, "cluster alias %q contains %q", alias, flowSeparator)
		case seen[alias]:
			continue
		}
		seen[alias] = true
		f.clusters = append(f.clusters, alias)
	}
	slices.Sort(f.clusters)
	return nil
}

func (f *File) pointers(def *configdef.Def) map[string]*string {
	out := map[string]*string{}
	for _, name := range def.Names() {
		if v, ok := f.props[name]; ok {
			out[name] = &v
		}
	}
	return out
}

// errorAt is an error naming the file, the line of key (when the file has it) and the key.
func (f *File) errorAt(key, format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if line, ok := f.lines[key]; ok {
		return fmt.Errorf("%s line %d (%s): %s", f.Path, line, key, msg)
	}
	return fmt.Errorf("%s: %s", f.Path, msg)
}

// Takeover says whether kmirror takes over Java MM2's source offsets when it first declares a flow's source
// connector (KeyTakeover, default true).
func (f *File) Takeover() bool {
	v, ok := f.props[KeyTakeover]
	return !ok || parseBoolean(v)
}

// Line is the line key was last set on, 0 when the file does not set it.
func (f *File) Line(key string) int { return f.lines[key] }

// Clusters are the aliases, sorted.
func (f *File) Clusters() []string { return slices.Clone(f.clusters) }

// fileDef is the part of MirrorMakerConfig.config() kmirror checks: clusters, the internal REST switch,
// config.providers and the client security keys (class-typed ones aside: no class is loaded here).
func fileDef() *configdef.Def {
	d := configdef.New().
		Define(configdef.Key{Name: keyClusters, Type: configdef.TypeList, Importance: configdef.ImportanceHigh}).
		Define(configdef.Key{Name: keyInternalRest, Type: configdef.TypeBoolean, Default: false, HasDefault: true, Importance: configdef.ImportanceHigh}).
		Define(configdef.Key{Name: keyConfigProviders, Type: configdef.TypeList, Default: []string{}, HasDefault: true, Importance: configdef.ImportanceLow})
	for _, k := range securityKeys() {
		if k.Type != configdef.TypeClass {
			d.Define(k)
		}
	}
	return d
}

// securityKeys are security.protocol and the client ssl.* and sasl.* keys, as MM2's connectors define them.
var securityKeys = sync.OnceValue(func() []configdef.Key {
	p, _ := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	var out []configdef.Key
	for _, k := range p.Own.Keys() {
		if k.Name == keySecurityProtocol || strings.HasPrefix(k.Name, "ssl.") || strings.HasPrefix(k.Name, "sasl.") {
			out = append(out, k)
		}
	}
	return out
})

// clientConnectionKeys are the names of MirrorClientConfig.CLIENT_CONFIG_DEF: what MM2 copies from a cluster's
// settings to its producer, consumer and admin settings.
var clientConnectionKeys = sync.OnceValue(func() []string {
	names := []string{keyBootstrapServers}
	for _, k := range securityKeys() {
		names = append(names, k.Name)
	}
	return names
})

// connectorKeyNames are MirrorMakerConfig.allConfigNames: every key one of the three connectors defines; only
// those top-level keys reach the connectors.
var connectorKeyNames = sync.OnceValue(func() map[string]bool {
	out := map[string]bool{}
	for _, p := range mirrorconfig.Plugins() {
		for _, name := range p.Own.Names() {
			out[name] = true
		}
	}
	return out
})
