package mm2offsets

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// The offsets topic is read from a cluster kmirror does not own: whatever a key or value holds, the collector
// counts it as malformed or takes it, and the PATCH body it builds is one the REST API reads back unchanged.

// FuzzKeyRoundTrip: ParseKey reads back what Key writes, for every name Java can hold. Key turns invalid UTF-8
// into U+FFFD byte by byte, as a Java String decoded from those bytes would; the round trip is checked on that.
func FuzzKeyRoundTrip(f *testing.F) {
	f.Add(DefaultConnector, "A", "t1", int32(0))
	f.Add(`mm2 "x"\y`, "a<b>&c/\x01\n\u2028", "t", int32(2147483647))
	f.Add("", "", "", int32(-1))
	f.Add("c", "\x1f\x7f\xff", "\u00e9\U0001F600", int32(7))
	f.Fuzz(func(t *testing.T, connector, cluster, topic string, partition int32) {
		key := Key(connector, Partition{Cluster: cluster, Topic: topic, Partition: partition})
		if !json.Valid(key) || !utf8.Valid(key) {
			t.Fatalf("Key wrote %q, not valid JSON in UTF-8", key)
		}
		gotConnector, p, err := ParseKey(key)
		if gotConnector != asJava(connector) {
			t.Fatalf("connector: got %q from %q, want %q", gotConnector, key, asJava(connector))
		}
		if partition < 0 {
			if err == nil {
				t.Fatalf("ParseKey(%q) accepted a negative partition", key)
			}
			return
		}
		if err != nil {
			t.Fatalf("ParseKey(%q): %v", key, err)
		}
		want := Partition{Cluster: asJava(cluster), Topic: asJava(topic), Partition: partition}
		if p != want {
			t.Fatalf("ParseKey(%q) = %+v, want %+v", key, p, want)
		}
	})
}

// asJava is s as Key sees it: each byte of invalid UTF-8 one U+FFFD.
func asJava(s string) string { return string([]rune(s)) }

// FuzzCollector: any sequence of records (a key and a value, or a tombstone) is counted and never fatal, every
// offset comes out non-negative with a partition in range, and the body parses as the KIP-875 shape it claims.
func FuzzCollector(f *testing.F) {
	f.Add([]byte(`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]`), []byte(`{"offset":41}`), false)
	f.Add([]byte(`["MirrorSourceConnector",{"topic":"t1","partition":3,"cluster":"A"}]`), []byte(`{"offset":9223372036854775807}`), false)
	f.Add([]byte(`["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]`), []byte(nil), true)
	f.Add([]byte(`["MirrorCheckpointConnector",{"group":"g","partition":0,"topic":"t"}]`), []byte(`{"offset":0}`), false)
	f.Add([]byte(`["MirrorSourceConnector",{"cluster":"A","partition":1e0,"topic":"t1"}]`), []byte(`{"offset":-1}`), false)
	f.Add([]byte(`[]`), []byte(`[]`), false)
	f.Add([]byte("\xff"), []byte(`{"offset":1.5}`), false)
	f.Fuzz(func(t *testing.T, key, value []byte, tombstone bool) {
		c := NewCollector("", "")
		if tombstone {
			value = nil
		}
		// The record, then a canonical record of the same partition if the key parses, then the record again:
		// the last value of a key wins, and two key spellings of one partition must not give two offsets.
		c.Add(key, value)
		if _, p, err := ParseKey(key); err == nil {
			c.Add(Key(DefaultConnector, p), []byte(`{"offset":5}`))
			c.Add(key, value)
		}
		st := c.Stats()
		if st.Selected+st.OtherConnectors+st.OtherClusters > st.Records || st.Tombstones > st.Selected {
			t.Fatalf("inconsistent stats %+v", st)
		}
		offsets := c.Offsets()
		seen := map[Partition]bool{}
		for _, o := range offsets {
			if o.Offset < 0 || o.Source.Partition < 0 {
				t.Fatalf("collected %+v", o)
			}
			if seen[o.Source] {
				t.Fatalf("partition %s collected twice: %+v", o.Source, offsets)
			}
			seen[o.Source] = true
		}
		for _, body := range [][]byte{Body(offsets), BodyLines(offsets)} {
			var parsed struct {
				Offsets []struct {
					Partition struct {
						Cluster   string `json:"cluster"`
						Partition int32  `json:"partition"`
						Topic     string `json:"topic"`
					} `json:"partition"`
					Offset struct {
						Offset int64 `json:"offset"`
					} `json:"offset"`
				} `json:"offsets"`
			}
			if err := json.Unmarshal(body, &parsed); err != nil {
				t.Fatalf("body %q: %v", body, err)
			}
			if len(parsed.Offsets) != len(offsets) {
				t.Fatalf("body %q has %d offsets, want %d", body, len(parsed.Offsets), len(offsets))
			}
			for i, o := range offsets {
				got := parsed.Offsets[i]
				if got.Partition.Cluster != o.Source.Cluster || got.Partition.Topic != o.Source.Topic ||
					got.Partition.Partition != o.Source.Partition || got.Offset.Offset != o.Offset {
					t.Fatalf("body entry %d reads %+v, want %+v", i, got, o)
				}
			}
		}
		for _, ex := range st.MalformedExamples {
			if !strings.HasPrefix(ex, "key ") && !strings.HasPrefix(ex, "value ") {
				t.Fatalf("malformed example %q says neither key nor value", ex)
			}
		}
	})
}

// FuzzParseValue: an offset value parses to a non-negative offset or an error, and a parsed offset written back
// as {"offset":n} parses to itself.
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{`{"offset":41}`, `{"offset":0,"x":[1]}`, `{"offset":-1}`, `{"offset":1e3}`, `{"offset":"1"}`,
		`{"offset":9223372036854775808}`, `null`, `{}`, `{"offset":1}{"offset":2}`, " {\"offset\":7} "} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, value []byte) {
		off, err := ParseValue(value)
		if err != nil {
			return
		}
		if off < 0 {
			t.Fatalf("ParseValue(%q) = %d", value, off)
		}
		again, err := ParseValue([]byte(`{"offset":` + strconv.FormatInt(off, 10) + `}`))
		if err != nil || again != off {
			t.Fatalf("offset %d written back reads %d, %v", off, again, err)
		}
	})
}
