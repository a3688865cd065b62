package connectors

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// TestNoConfigKeyLiterals holds the connector code to reading configs through the typed structs and the
// constants of mirrorconfig: a key spelt as a string literal is a typo waiting to happen. The definitions
// themselves (mirrorconfig, configdef), the client settings' own key tables (clientconfig) and MM2's policy and
// filter keys (mirror) are where keys are spelt. Keys of one word (name, topics, groups, ...) are left out:
// they are also the names of log attributes and notices; so are the client security keys, which are client
// settings (clientconfig's) that MM2 happens to define on the connector too.
func TestNoConfigKeyLiterals(t *testing.T) {
	keys := map[string]bool{}
	for _, p := range mirrorconfig.Plugins() {
		for _, d := range []interface{ Names() []string }{mirrorconfig.ConfigDef(p), mirrorconfig.KmirrorDef(p)} {
			for _, n := range d.Names() {
				if strings.ContainsAny(n, ".-") && !clientSecurityKey(n) {
					keys[n] = true
				}
			}
		}
	}
	skip := map[string]bool{"mirrorconfig": true, "configdef": true, "clientconfig": true, "mirror": true, "testdata": true}
	var found []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && skip[d.Name()] {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				if s, err := strconv.Unquote(lit.Value); err == nil && keys[s] {
					found = append(found, fset.Position(lit.Pos()).String()+": "+lit.Value)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "use the typed config or mirrorconfig's constants")
}

func clientSecurityKey(name string) bool {
	return strings.HasPrefix(name, "ssl.") || strings.HasPrefix(name, "sasl.") || name == "security.protocol"
}
