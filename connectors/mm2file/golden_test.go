package mm2file

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// The files under testdata/golden are what Kafka 4.1.1's MirrorMakerConfig makes of testdata/files
// (testdata/java/MM2ConfigDump.java): clusterPairs and connectorBaseConfig of every pair and connector, or
// the error its constructor throws. TestGoldenFilesAreJavas regenerates them.

type goldenFile struct {
	Error string                                  `json:"error"`
	Pairs map[string]map[string]map[string]string `json:"pairs"`
}

func propertiesFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("testdata", "files", "*.properties"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, len(files), 7)
	return files
}

func goldenFor(t *testing.T, dir, file string) goldenFile {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, strings.TrimSuffix(filepath.Base(file), ".properties")+".json"))
	require.NoError(t, err)
	var g goldenFile
	require.NoError(t, json.Unmarshal(raw, &g))
	return g
}

func TestBaseConfigMatchesJava(t *testing.T) {
	for _, path := range propertiesFiles(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			want := goldenFor(t, filepath.Join("testdata", "golden"), path)
			f, err := Load(path)
			if want.Error != "" {
				require.Error(t, err)
				require.Contains(t, err.Error(), want.Error)
				return
			}
			require.NoError(t, err)
			got := map[string]map[string]map[string]string{}
			for _, fl := range f.ClusterPairs() {
				got[fl.String()] = map[string]map[string]string{}
				for _, class := range connectorClasses {
					got[fl.String()][simpleName(class)] = f.BaseConfig(fl, class)
				}
			}
			if want.Pairs == nil {
				want.Pairs = map[string]map[string]map[string]string{}
			}
			require.Equal(t, want.Pairs, got)
		})
	}
}

// TestDeclaredConnectorsFollowJava checks the declared set against Java's: every herder's heartbeat connector,
// the source and checkpoint connectors of enabled flows only, each with Java's config under kmirror's name.
func TestDeclaredConnectorsFollowJava(t *testing.T) {
	for _, path := range propertiesFiles(t) {
		want := goldenFor(t, filepath.Join("testdata", "golden"), path)
		if want.Error != "" {
			continue
		}
		if len(want.Pairs) == 0 {
			require.Equal(t, "no-flows.properties", filepath.Base(path), "a file meant to have flows has none in Java")
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Load(path)
			require.NoError(t, err)
			cs, err := f.Connectors(nil)
			require.NoError(t, err)
			wantNames := map[string]bool{}
			for pair, byClass := range want.Pairs {
				for simple, cfg := range byClass {
					if simple != simpleName(mirrorconfig.HeartbeatConnectorClass) && !parseBoolean(cfg[keyEnabled]) {
						continue
					}
					wantNames[pair+"."+simple] = true
				}
			}
			for _, c := range cs {
				require.True(t, wantNames[c.Name], "declared %s, which Java does not run", c.Name)
				delete(wantNames, c.Name)
				javaCfg := want.Pairs[c.Flow.String()][simpleName(c.Class)]
				require.Equal(t, javaCfg[keyName], c.MM2Name)
				gotCfg := map[string]string{}
				for k, v := range c.Config {
					gotCfg[k] = v
				}
				gotCfg[keyName] = javaCfg[keyName]
				require.Equal(t, javaCfg, gotCfg, c.Name)
			}
			require.Empty(t, wantNames, "connectors Java runs that were not declared")
		})
	}
}

// TestGoldenFilesAreJavas runs MM2ConfigDump against the Kafka 4.1.1 jars and requires the checked-in golden
// files to be its output, byte for byte.
func TestGoldenFilesAreJavas(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Java: skipped under -short, the suite without brokers or PostgreSQL")
	}
	libs := os.Getenv("KAFKA_LIBS")
	if libs == "" {
		t.Fatal("KAFKA_LIBS is not set: run through scripts/test, which fetches Kafka's jars")
	}
	java, javac := os.Getenv("JAVA_BIN"), "javac"
	if java == "" {
		java = "java"
	} else {
		javac = filepath.Join(filepath.Dir(java), "javac")
	}
	classes, out := t.TempDir(), t.TempDir()
	cp := filepath.Join(libs, "*")
	run := func(name string, args ...string) {
		t.Helper()
		b, err := exec.Command(name, args...).CombinedOutput()
		require.NoError(t, err, "%s", b)
	}
	run(javac, "-d", classes, "-cp", cp, filepath.Join("testdata", "java", "MM2ConfigDump.java"))
	files := propertiesFiles(t)
	run(java, append([]string{"-cp", classes + string(os.PathListSeparator) + cp, "MM2ConfigDump", out}, files...)...)
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".properties") + ".json"
		want, err := os.ReadFile(filepath.Join(out, name))
		require.NoError(t, err)
		got, err := os.ReadFile(filepath.Join("testdata", "golden", name))
		require.NoError(t, err)
		require.Equal(t, string(want), string(got), "testdata/golden/%s is stale: copy it from %s", name, out)
	}
}
