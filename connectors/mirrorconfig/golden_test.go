package mirrorconfig

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/configdef"
)

// The files under testdata/connect-4.1.1 were produced by Kafka 4.1.1 itself; see its README.

func goldenPath(name string) string { return filepath.Join("testdata", "connect-4.1.1", name) }

// jacksonJSON encodes like Connect's Jackson ObjectMapper: compact, no HTML escaping.
func jacksonJSON(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestPluginConfigMatchesConnect(t *testing.T) {
	for _, p := range Plugins() {
		t.Run(p.Class, func(t *testing.T) {
			want, err := os.ReadFile(goldenPath("plugin-config-" + simpleName(p.Class) + ".json"))
			require.NoError(t, err)
			var infos []configdef.ConfigKeyInfo
			for _, k := range ConfigDef(p).Keys() {
				infos = append(infos, configdef.KeyInfo(k))
			}
			require.Equal(t, string(want), string(jacksonJSON(t, infos)))
		})
	}
}

func TestValidateMatchesConnectByteForByte(t *testing.T) {
	want, err := os.ReadFile(goldenPath("validate-heartbeat-minimal.json"))
	require.NoError(t, err)
	p, ok := LookupPlugin(HeartbeatConnectorClass)
	require.True(t, ok)
	got := Validate(p, map[string]*string{
		"name":                 ptr("c"),
		"connector.class":      ptr(HeartbeatConnectorClass),
		"source.cluster.alias": ptr("a"),
	}, nil)
	require.Equal(t, string(want), string(jacksonJSON(t, got)))
}

type goldenCase struct {
	Props       map[string]*string     `json:"props"`
	Name        string                 `json:"name"`
	ErrorCount  int                    `json:"error_count"`
	Groups      []string               `json:"groups"`
	ConfigCount int                    `json:"config_count"`
	ConfigNames []string               `json:"config_names"`
	Values      map[string]*string     `json:"values"`
	Entries     []configdef.ConfigInfo `json:"entries"`
	Message     *string                `json:"message"`
}

func TestValidateMatchesConnectCases(t *testing.T) {
	raw, err := os.ReadFile(goldenPath("validate-cases.json"))
	require.NoError(t, err)
	var cases map[string]goldenCase
	require.NoError(t, json.Unmarshal(raw, &cases))
	require.NotEmpty(t, cases)
	for id, tc := range cases {
		t.Run(id, func(t *testing.T) {
			p, ok := LookupPlugin(*tc.Props["connector.class"])
			require.True(t, ok)
			got := Validate(p, tc.Props, nil)

			require.Equal(t, tc.Name, got.Name)
			require.Equal(t, tc.ErrorCount, got.ErrorCount)
			require.Equal(t, tc.Groups, got.Groups)
			require.Len(t, got.Configs, tc.ConfigCount)
			if tc.ConfigNames != nil {
				require.Equal(t, tc.ConfigNames, configNames(got))
			}
			for name, want := range tc.Values {
				require.Equal(t, want, entry(got, name).Value.Value, name)
			}
			// Every entry Connect reports with errors or without a definition, and nothing else
			// with errors.
			for _, want := range tc.Entries {
				require.Equal(t, string(jacksonJSON(t, want)), string(jacksonJSON(t, entry(got, entryName(want)))))
			}
			require.Equal(t, len(tc.Entries), countNoteworthy(got, tc.Entries))
			if tc.Message == nil {
				require.Empty(t, ErrorMessage(got))
			} else {
				require.Equal(t, *tc.Message, ErrorMessage(got))
			}
		})
	}
}

func entryName(c configdef.ConfigInfo) string {
	if c.Definition != nil {
		return c.Definition.Name
	}
	return c.Value.Name
}

func configNames(infos configdef.ConfigInfos) []string {
	names := make([]string, len(infos.Configs))
	for i, c := range infos.Configs {
		names[i] = entryName(c)
	}
	return names
}

// entry returns the entry for name, failing the test if there is none.
func entry(infos configdef.ConfigInfos, name string) configdef.ConfigInfo {
	for _, c := range infos.Configs {
		if entryName(c) == name {
			return c
		}
	}
	panic("no entry " + name)
}

// countNoteworthy counts the entries of got that have errors or no definition, plus those
// listed in expected for another reason (extra entries such as converter settings).
func countNoteworthy(got configdef.ConfigInfos, expected []configdef.ConfigInfo) int {
	listed := map[string]bool{}
	for _, e := range expected {
		listed[entryName(e)] = true
	}
	n := 0
	for _, c := range got.Configs {
		if c.Definition == nil || (c.Value != nil && len(c.Value.Errors) > 0) || listed[entryName(c)] {
			n++
		}
	}
	return n
}

func ptr(s string) *string { return &s }

func simpleName(class string) string { return filepath.Ext(class)[1:] }
