package mm2offsets

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A record of a Connect offsets topic, as bytes.
type rec struct{ key, value string }

const null = "\x00null" // a tombstone in a rec table

func collect(c *Collector, recs ...rec) *Collector {
	for _, r := range recs {
		var v []byte
		if r.value != null {
			v = []byte(r.value)
		}
		var k []byte
		if r.key != null {
			k = []byte(r.key)
		}
		c.Add(k, v)
	}
	return c
}

// The bytes below are those of §5.5 of the MM2 reference; the first key is what Kafka 4.1.1's dedicated
// MirrorMaker wrote in the harness (mm2-offsets.src1.internal, partition 22).
func TestJavaKeyBytes(t *testing.T) {
	require.Equal(t, `["MirrorSourceConnector",{"cluster":"src1","partition":2,"topic":"exp-topic-1"}]`,
		string(Key(DefaultConnector, Partition{Cluster: "src1", Topic: "exp-topic-1", Partition: 2})))
	require.Equal(t, `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]`,
		string(Key("MirrorSourceConnector", Partition{Cluster: "A", Topic: "t1", Partition: 0})))
	// Jackson escapes only quotes, backslashes and control characters (upper-case hex), not '<', '&', '/'
	// or U+2028 as Go's encoding/json would.
	require.Equal(t, `["mm2 \"x\"\\y",{"cluster":"a<b>&c/\u0001\n\u2028","partition":2147483647,"topic":"t"}]`,
		strings.ReplaceAll(string(Key(`mm2 "x"\y`, Partition{Cluster: "a<b>&c/\x01\n\u2028", Topic: "t", Partition: 2147483647})), "\u2028", `\u2028`))
	require.Contains(t, string(Key("c", Partition{Cluster: "\x1f", Topic: "t"})), `"\u001F"`)
}

func TestParseKeyAndValue(t *testing.T) {
	conn, p, err := ParseKey([]byte(`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]`))
	require.NoError(t, err)
	require.Equal(t, "MirrorSourceConnector", conn)
	require.Equal(t, Partition{Cluster: "A", Topic: "t1", Partition: 0}, p)

	// Connect reads numbers back as Long; a partition beyond an int is not a Kafka partition.
	_, p, err = ParseKey([]byte(`["MirrorSourceConnector",{"cluster":"A","partition":2147483647,"topic":"t1"}]`))
	require.NoError(t, err)
	require.Equal(t, int32(2147483647), p.Partition)
	for _, bad := range []string{"2147483648", "-1", "1.0", "1e0", `"1"`, "null"} {
		_, _, err := ParseKey([]byte(`["MirrorSourceConnector",{"cluster":"A","partition":` + bad + `,"topic":"t1"}]`))
		require.Error(t, err, bad)
	}

	off, err := ParseValue([]byte(`{"offset":41}`))
	require.NoError(t, err)
	require.Equal(t, int64(41), off)
	off, err = ParseValue([]byte(`{"offset":9223372036854775807}`))
	require.NoError(t, err)
	require.Equal(t, int64(9223372036854775807), off)
	for _, bad := range []string{`{"offset":-1}`, `{"offset":"41"}`, `{"offset":4.5}`, `{}`, `[41]`, `41`, `null`, `{"offset":9223372036854775808}`, ``} {
		_, err := ParseValue([]byte(bad))
		require.Error(t, err, bad)
	}
}

func TestCollectorLastValueWinsTombstonesRemove(t *testing.T) {
	c := collect(NewCollector("", ""),
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]`, `{"offset":10}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":1,"topic":"t1"}]`, `{"offset":7}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]`, `{"offset":41}`},
		// removed by a tombstone (KIP-875 reset) ...
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":2,"topic":"t1"}]`, `{"offset":99}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":2,"topic":"t1"}]`, null},
		// ... and written again after one
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":3,"topic":"t1"}]`, `{"offset":5}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":3,"topic":"t1"}]`, null},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":3,"topic":"t1"}]`, `{"offset":6}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"a0"}]`, `{"offset":0}`},
		// the other MM2 connectors share the topic
		rec{`["MirrorCheckpointConnector",{"partition":0,"topic":"A.t1","group":"g1"}]`, `{"offset":0}`},
		rec{`["MirrorHeartbeatConnector",{"sourceClusterAlias":"A","targetClusterAlias":"B"}]`, `{"offset":0}`},
		rec{`["mm2-other-flow",{"cluster":"A","partition":0,"topic":"t1"}]`, `{"offset":1000}`},
	)
	got := c.Offsets()
	require.Equal(t, []Offset{
		{Source: Partition{"A", "a0", 0}, Offset: 0},
		{Source: Partition{"A", "t1", 0}, Offset: 41},
		{Source: Partition{"A", "t1", 1}, Offset: 7},
		{Source: Partition{"A", "t1", 3}, Offset: 6},
	}, got)
	require.Equal(t, `{"offsets":[`+
		`{"partition":{"cluster":"A","partition":0,"topic":"a0"},"offset":{"offset":0}},`+
		`{"partition":{"cluster":"A","partition":0,"topic":"t1"},"offset":{"offset":41}},`+
		`{"partition":{"cluster":"A","partition":1,"topic":"t1"},"offset":{"offset":7}},`+
		`{"partition":{"cluster":"A","partition":3,"topic":"t1"},"offset":{"offset":6}}]}`, string(Body(got)))
	s := c.Stats()
	require.Equal(t, 12, s.Records)
	require.Equal(t, 9, s.Selected)
	require.Equal(t, 2, s.Tombstones)
	require.Equal(t, 3, s.OtherConnectors)
	require.Equal(t, 0, s.Malformed)
	require.Equal(t, []string{"MirrorCheckpointConnector", "MirrorHeartbeatConnector", "mm2-other-flow"}, s.Connectors)
}

func TestCollectorSelectsConnectorAndCluster(t *testing.T) {
	recs := []rec{
		{`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]`, `{"offset":1}`},
		{`["MirrorSourceConnector",{"cluster":"C","partition":0,"topic":"t1"}]`, `{"offset":2}`},
		{`["a-to-b",{"cluster":"A","partition":0,"topic":"t1"}]`, `{"offset":3}`},
	}
	require.Len(t, collect(NewCollector("", ""), recs...).Offsets(), 2)
	c := collect(NewCollector("", "A"), recs...)
	require.Equal(t, []Offset{{Source: Partition{"A", "t1", 0}, Offset: 1}}, c.Offsets())
	require.Equal(t, 1, c.Stats().OtherClusters)
	require.Equal(t, []Offset{{Source: Partition{"A", "t1", 0}, Offset: 3}}, collect(NewCollector("a-to-b", "A"), recs...).Offsets())
	require.Empty(t, collect(NewCollector("nope", ""), recs...).Offsets())
}

func TestCollectorCountsMalformedRecords(t *testing.T) {
	c := collect(NewCollector("", ""),
		rec{`not json`, `{"offset":1}`},
		rec{null, `{"offset":1}`},
		rec{`[]`, `{"offset":1}`},
		rec{`[1,{"cluster":"A","partition":0,"topic":"t1"}]`, `{"offset":1}`},
		rec{`["MirrorSourceConnector"]`, `{"offset":1}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":"0","topic":"t1"}]`, `{"offset":1}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":-1,"topic":"t1"}]`, `{"offset":1}`},
		rec{`["MirrorSourceConnector",{"partition":0,"topic":"t1"}]`, `{"offset":1}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":0}]`, `{"offset":1}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"},"x"]`, `{"offset":1}`},
		// A value that does not parse leaves its partition without an offset, as Java skips it ...
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":1,"topic":"t1"}]`, `{"offset":5}`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":1,"topic":"t1"}]`, `{"offset":"6"}`},
		// ... until a good one follows.
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":2,"topic":"t1"}]`, `garbage`},
		rec{`["MirrorSourceConnector",{"cluster":"A","partition":2,"topic":"t1"}]`, `{"offset":8}`},
	)
	require.Equal(t, []Offset{{Source: Partition{"A", "t1", 2}, Offset: 8}}, c.Offsets())
	s := c.Stats()
	require.Equal(t, 12, s.Malformed)
	require.Len(t, s.MalformedExamples, maxExamples)
	require.Contains(t, s.MalformedExamples[0], "not a JSON array")
	require.Zero(t, s.OtherConnectors, "a key without a connector name is malformed, not another connector's")
}

// A partition stored under another key form (written by something other than Java MM2, e.g. a partition
// map in another member order) is used, and flagged, unless the form Java looks up exists too.
func TestCollectorPrefersTheKeyJavaLooksUp(t *testing.T) {
	other := `["MirrorSourceConnector",{"cluster":"A","topic":"t1","partition":0}]`
	java := `["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]`
	c := collect(NewCollector("", ""), rec{other, `{"offset":50}`})
	require.Equal(t, []Offset{{Source: Partition{"A", "t1", 0}, Offset: 50, NonCanonical: true}}, c.Offsets())
	collect(c, rec{java, `{"offset":40}`}, rec{other, `{"offset":60}`})
	require.Equal(t, []Offset{{Source: Partition{"A", "t1", 0}, Offset: 40}}, c.Offsets())
	collect(c, rec{java, null})
	require.Equal(t, []Offset{{Source: Partition{"A", "t1", 0}, Offset: 60, NonCanonical: true}}, c.Offsets())
}

func TestBody(t *testing.T) {
	require.Equal(t, `{"offsets":[{"partition":{"cluster":"A","partition":0,"topic":"t1"},"offset":{"offset":41}}]}`,
		string(Body([]Offset{{Source: Partition{Cluster: "A", Topic: "t1", Partition: 0}, Offset: 41}})))
	require.Equal(t, `{"offsets":[]}`, string(Body(nil)))
	require.Equal(t, `{"offsets":[{"partition":{"cluster":"a<&>","partition":1,"topic":"t"},"offset":{"offset":0}}]}`,
		string(Body([]Offset{{Source: Partition{Cluster: "a<&>", Topic: "t", Partition: 1}}})))
	require.Equal(t, "mm2-offsets.us-east.internal", Topic("us-east"))

	two := []Offset{{Source: Partition{"A", "t1", 0}, Offset: 41}, {Source: Partition{"A", "t1", 1}, Offset: 7}}
	require.Equal(t, `{"offsets":[
  {"partition":{"cluster":"A","partition":0,"topic":"t1"},"offset":{"offset":41}},
  {"partition":{"cluster":"A","partition":1,"topic":"t1"},"offset":{"offset":7}}
]}
`, string(BodyLines(two)))
	require.JSONEq(t, string(Body(two)), string(BodyLines(two)))
}
