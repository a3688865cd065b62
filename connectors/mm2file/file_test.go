package mm2file

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func parse(t *testing.T, text string) *File {
	t.Helper()
	f, err := Parse("mm2.properties", []byte(text))
	require.NoError(t, err)
	return f
}

func TestErrorsNameTheLineAndKey(t *testing.T) {
	_, err := Parse("mm2.properties", []byte("clusters = A, B\n\nsecurity.protocol = TLS\n"))
	require.EqualError(t, err, "mm2.properties line 3 (security.protocol): Invalid value TLS for configuration security.protocol: "+
		"String must be one of (case insensitive): SASL_SSL, PLAINTEXT, SSL, SASL_PLAINTEXT") // Java's HashSet order

	_, err = Parse("mm2.properties", []byte("# no clusters\nA.bootstrap.servers=a:9092\n"))
	require.EqualError(t, err, `mm2.properties: Missing required configuration "clusters" which has no default value.`)

	_, err = Parse("mm2.properties", []byte("clusters = A,,B\n"))
	require.ErrorContains(t, err, "mm2.properties line 1 (clusters): an empty cluster alias")

	_, err = Parse("mm2.properties", []byte("clusters = A\nx = \\u12"))
	require.ErrorContains(t, err, "mm2.properties: line 2: malformed \\uxxxx encoding")
}

func TestHerdersKeepTheListedTargets(t *testing.T) {
	f := parse(t, "clusters = A, B, C\nA->B.enabled = true\nemit.heartbeats.enabled = false\nC->B.emit.heartbeats.enabled = true\n")
	all, err := f.Herders(nil)
	require.NoError(t, err)
	require.Equal(t, []Flow{{"A", "B"}, {"C", "B"}}, all)

	_, err = f.Herders([]string{"A"})
	require.ErrorIs(t, err, ErrNoFlows)
	require.EqualError(t, err, "No source->target replication flows.")

	_, err = f.Herders([]string{"D"})
	require.ErrorContains(t, err, `"D" is not one of the file's clusters (A, B, C)`)

	cs, err := f.Connectors([]string{"B"})
	require.NoError(t, err)
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
	}
	require.Equal(t, []string{"A->B.MirrorCheckpointConnector", "A->B.MirrorHeartbeatConnector", "A->B.MirrorSourceConnector", "C->B.MirrorHeartbeatConnector"}, names)
}

func TestConnectorsCarryTheirNameAndMM2Name(t *testing.T) {
	f := parse(t, "clusters = A, B\nA->B.enabled = true\nA.bootstrap.servers = a:9092\nB->A.emit.heartbeats.enabled = false\n")
	cs, err := f.Connectors(nil)
	require.NoError(t, err)
	require.Len(t, cs, 3)
	src := cs[2]
	require.Equal(t, "A->B.MirrorSourceConnector", src.Name)
	require.Equal(t, src.Name, src.Config["name"])
	require.Equal(t, "MirrorSourceConnector", src.MM2Name)
	require.Equal(t, "A.bootstrap.servers", src.Source("source.cluster.bootstrap.servers"))
	require.Equal(t, "A->B.enabled", src.Source("enabled"))
	require.Empty(t, src.Source("target.cluster.alias"))
}

func TestValidateNamesTheLinesOfTheKeysInTheMessage(t *testing.T) {
	f := parse(t, "clusters = A, B\nA->B.enabled = true\n\nA->B.tasks.max = many\n")
	cs, err := f.Connectors([]string{"B"})
	require.NoError(t, err)
	valid, problems := f.Validate(cs, func(c Connector) string {
		if c.Class == connectorClasses[0] {
			return "Invalid value many for configuration tasks.max: Not a number of type INT"
		}
		return ""
	})
	require.Len(t, valid, 2)
	require.Len(t, problems, 1)
	var inv *InvalidError
	require.ErrorAs(t, problems[0], &inv)
	require.Equal(t, "A->B.MirrorSourceConnector", inv.Name)
	require.ErrorContains(t, problems[0], "mm2.properties: A->B.MirrorSourceConnector: Invalid value many")
	require.ErrorContains(t, problems[0], "tasks.max is line 4 (A->B.tasks.max)")
}

func TestLatin1LikeJava(t *testing.T) {
	f := parse(t, "clusters = A, B\nA->B.enabled = true\nA->B.topics = caf\xe9\n")
	require.Equal(t, "café", f.BaseConfig(Flow{"A", "B"}, connectorClasses[0])["topics"])
}

func TestPrintJSONAndHCL(t *testing.T) {
	f := parse(t, "clusters = A, B\nA->B.enabled = true\nB->A.emit.heartbeats.enabled = false\n"+
		"A.sasl.jaas.config = ${file:/s.properties:jaas}\nA->B.topics = \"q\"\n")
	cs, err := f.Connectors(nil)
	require.NoError(t, err)

	var js bytes.Buffer
	require.NoError(t, WriteJSON(&js, cs))
	dec := json.NewDecoder(&js)
	n := 0
	for dec.More() {
		var doc struct {
			Name   string            `json:"name"`
			Config map[string]string `json:"config"`
		}
		require.NoError(t, dec.Decode(&doc))
		require.Equal(t, cs[n].Name, doc.Name)
		require.Equal(t, cs[n].Config, doc.Config)
		n++
	}
	require.Equal(t, 3, n)

	var hcl bytes.Buffer
	require.NoError(t, WriteHCL(&hcl, cs))
	out := hcl.String()
	require.Contains(t, out, `resource "kafka-connect_connector" "A_to_B_MirrorSourceConnector" {`)
	require.Contains(t, out, `name = "A->B.MirrorSourceConnector"`)
	require.Contains(t, out, `"topics" = "\"q\""`)
	require.Contains(t, out, "config_sensitive = {\n    \"source.admin.sasl.jaas.config\" = \"$${file:/s.properties:jaas}\"")
	require.Equal(t, 3, strings.Count(out, "resource "))
}
