package mm2file

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse: any input either fails to parse or yields connectors whose names are unique and whose configs
// carry their own name and flow.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "files", "*.properties"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse("fuzz.properties", data)
		if err != nil {
			return
		}
		cs, err := file.Connectors(nil)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, c := range cs {
			if seen[c.Name] {
				t.Fatalf("connector %q declared twice", c.Name)
			}
			seen[c.Name] = true
			if c.Config[keyName] != c.Name || c.Config[keyConnectorClass] == "" {
				t.Fatalf("connector %q has config name %q, class %q", c.Name, c.Config[keyName], c.Config[keyConnectorClass])
			}
		}
	})
}
