// Package mm2offsets reads the source offsets Java MirrorMaker 2 keeps in Kafka Connect's offsets topic and
// turns them into the body of PATCH /connectors/{name}/offsets (KIP-875), so that kmirror's
// MirrorSourceConnector takes over from a stopped Java MM2 exactly where it stopped: no re-copy, no gap.
//
// # What Java MM2 stores
//
// A MirrorSourceTask's progress lives in Connect's offsets topic (mm2-offsets.<source>.internal on the target
// cluster in dedicated mode; the Connect cluster's offset.storage.topic otherwise), one record per source
// partition, written by JsonConverter without schemas:
//
//	key   ["MirrorSourceConnector",{"cluster":"A","partition":0,"topic":"t1"}]
//	value {"offset":41}
//
// The first key element is the Connect connector name (MirrorSourceConnector in dedicated mode, whatever the
// operator chose on a Connect cluster); "cluster" is the source alias, "topic" the source topic, and the value
// the source offset of the last record the target acknowledged. The topic is compacted and read from the
// beginning: the last value of a key wins, and a null value (tombstone) removes it. Java looks a partition up
// by the exact bytes of its key, with the map members in the order above (Java HashMap order).
//
// # Why the values carry over unchanged
//
// MirrorSourceTask seeks each partition to stored offset + 1. kmirror's source task does the same: the
// offsets it stores are in the same {cluster, topic, partition} -> {offset} shape (the last acknowledged
// source offset), and it starts each partition at that offset + 1 (connectors/source/task.go, storedOffsets
// and the pipeline's kafka.Start at acked+1). So the offsets Java committed, written into kmirror with
// PATCH /connectors/{name}/offsets while kmirror's connector is STOPPED, make kmirror read the very next
// record Java would have read. The only records the target receives twice are the ones Java wrote after its
// last offset commit: none after a clean stop (Connect commits on shutdown), up to offset.flush.interval.ms
// (60 s) of them after a crash — the same window Java itself re-sends after a crash.
//
// Collector reproduces the reading side of Connect's KafkaOffsetBackingStore: records are taken in topic
// order, the last value per key bytes wins, tombstones delete. Records of other connectors (the checkpoint and
// heartbeat connectors share the topic) are skipped; records that do not parse are counted and described,
// never fatal, and a key whose last value does not parse has no offset (Connect's reader, too, returns no
// offset for a value it cannot deserialize). Body builds the PATCH body. The command kmirror mm2-offsets
// (cmd/kmirror) reads the topic and applies the body; docs/handover-from-mm2.md is the operator's procedure.
package mm2offsets

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// DefaultConnector is the Connect connector name dedicated-mode MM2 gives its source connector, and so the
// namespace of its offsets.
const DefaultConnector = "MirrorSourceConnector"

// Topic is the offsets topic of dedicated-mode MM2 for a flow from sourceAlias (on the flow's target cluster).
func Topic(sourceAlias string) string { return "mm2-offsets." + sourceAlias + ".internal" }

// Partition is a MirrorSourceConnector source partition: a topic-partition of the source cluster Cluster.
type Partition struct {
	Cluster   string
	Topic     string
	Partition int32
}

func (p Partition) String() string {
	return fmt.Sprintf("%s:%s[%d]", p.Cluster, p.Topic, p.Partition)
}

// Offset is a partition's stored offset: the source offset of the last record replicated (and committed).
type Offset struct {
	Source Partition
	Offset int64
	// NonCanonical is set when the key bytes differ from the ones Java MM2 looks up (another member order,
	// spaces, other escaping): Java MM2 itself would not resume from this offset.
	NonCanonical bool
}

// Stats counts what a Collector saw.
type Stats struct {
	Records         int // records added
	Selected        int // records of the connector (and cluster), tombstones included
	Tombstones      int // of those, null values
	OtherConnectors int // records of other connectors (or without a connector name), skipped
	OtherClusters   int // records of the connector for another source alias, skipped
	Malformed       int // records whose key or value does not parse as a MirrorSourceConnector offset
	// MalformedExamples describes the first few malformed records.
	MalformedExamples []string
	// Connectors lists, sorted, the connector names of skipped records (at most 20), to help find the
	// right --connector.
	Connectors []string
}

const maxExamples = 5
const maxConnectorNames = 20

// Collector gathers the offsets of one connector from the records of a Connect offsets topic.
type Collector struct {
	connector string
	cluster   string
	byKey     map[string]entry // raw key bytes -> the last value seen
	seq       int
	stats     Stats
	others    map[string]bool
}

type entry struct {
	p         Partition
	offset    int64
	valid     bool // false: the last value did not parse, so the key has no offset (as in Java)
	canonical bool
	seq       int
}

// NewCollector collects the offsets of the Connect connector named connector (DefaultConnector if empty);
// with a non-empty sourceAlias, only those of partitions whose "cluster" is sourceAlias.
func NewCollector(connector, sourceAlias string) *Collector {
	if connector == "" {
		connector = DefaultConnector
	}
	return &Collector{connector: connector, cluster: sourceAlias, byKey: map[string]entry{}, others: map[string]bool{}}
}

// Add takes one record of the offsets topic, in topic order within each partition. A nil value is a tombstone.
func (c *Collector) Add(key, value []byte) {
	c.stats.Records++
	c.seq++
	connector, p, err := ParseKey(key)
	if connector != "" && connector != c.connector {
		c.other(connector)
		return
	}
	if err != nil {
		c.malformed(fmt.Sprintf("key %s: %v", quote(key), err))
		return
	}
	if c.cluster != "" && p.Cluster != c.cluster {
		c.stats.OtherClusters++
		return
	}
	c.stats.Selected++
	if value == nil {
		c.stats.Tombstones++
		delete(c.byKey, string(key))
		return
	}
	e := entry{p: p, canonical: bytes.Equal(key, Key(c.connector, p)), seq: c.seq}
	if e.offset, err = ParseValue(value); err != nil {
		c.malformed(fmt.Sprintf("value %s of %s: %v (the partition is left without an offset)", quote(value), p, err))
	} else {
		e.valid = true
	}
	c.byKey[string(key)] = e
}

func (c *Collector) other(connector string) {
	c.stats.OtherConnectors++
	if len(c.others) < maxConnectorNames {
		c.others[connector] = true
	}
}

func (c *Collector) malformed(why string) {
	c.stats.Malformed++
	if len(c.stats.MalformedExamples) < maxExamples {
		c.stats.MalformedExamples = append(c.stats.MalformedExamples, why)
	}
}

// Offsets returns the collected offsets sorted by cluster, topic and partition. A partition stored under
// several key forms (only possible when something other than Java MM2 wrote the topic) takes the value of the
// key Java MM2 looks up, or else the most recent one.
func (c *Collector) Offsets() []Offset {
	best := map[Partition]entry{}
	for _, e := range c.byKey {
		if !e.valid {
			continue
		}
		b, ok := best[e.p]
		if !ok || (e.canonical && !b.canonical) || (e.canonical == b.canonical && e.seq > b.seq) {
			best[e.p] = e
		}
	}
	out := make([]Offset, 0, len(best))
	for p, e := range best {
		out = append(out, Offset{Source: p, Offset: e.offset, NonCanonical: !e.canonical})
	}
	slices.SortFunc(out, func(a, b Offset) int {
		return cmp.Or(strings.Compare(a.Source.Cluster, b.Source.Cluster), strings.Compare(a.Source.Topic, b.Source.Topic),
			cmp.Compare(a.Source.Partition, b.Source.Partition))
	})
	return out
}

// Stats returns what the collector has seen so far.
func (c *Collector) Stats() Stats {
	s := c.stats
	s.MalformedExamples = slices.Clone(s.MalformedExamples)
	s.Connectors = make([]string, 0, len(c.others))
	for n := range c.others {
		s.Connectors = append(s.Connectors, n)
	}
	slices.Sort(s.Connectors)
	return s
}

// ParseKey reads a Connect offsets key of a MirrorSourceConnector: [connector, {cluster, partition, topic}],
// in any member order, partition an integer (Connect reads it back as a Long; MM2 accepts Integer or Long)
// between 0 and 2^31-1. connector is returned whenever the key is an array starting with a string, even if
// the rest is wrong, so that keys of other connectors can be told from broken ones.
func ParseKey(key []byte) (connector string, p Partition, err error) {
	if key == nil {
		return "", p, errors.New("null key")
	}
	var parts []json.RawMessage
	if err := json.Unmarshal(key, &parts); err != nil {
		return "", p, errors.New("not a JSON array")
	}
	if len(parts) == 0 {
		return "", p, errors.New("empty array")
	}
	if err := json.Unmarshal(parts[0], &connector); err != nil {
		return "", p, errors.New("the first element (the connector name) is not a string")
	}
	if len(parts) != 2 {
		return connector, p, fmt.Errorf("%d elements, want 2 (connector name, partition)", len(parts))
	}
	dec := json.NewDecoder(bytes.NewReader(parts[1]))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return connector, p, errors.New("the partition is not a JSON object")
	}
	var ok bool
	if p.Cluster, ok = m["cluster"].(string); !ok {
		return connector, p, errors.New(`the partition has no string "cluster"`)
	}
	if p.Topic, ok = m["topic"].(string); !ok {
		return connector, p, errors.New(`the partition has no string "topic"`)
	}
	n, ok := m["partition"].(json.Number)
	if !ok {
		return connector, p, errors.New(`the partition has no number "partition"`)
	}
	i, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || i < 0 || i > math.MaxInt32 {
		return connector, p, fmt.Errorf(`"partition" %s is not an integer between 0 and 2147483647`, n)
	}
	p.Partition = int32(i)
	return connector, p, nil
}

// ParseValue reads a MirrorSourceConnector offset value, {"offset":<long>}, a non-negative integer. Other
// members are ignored, as MM2 ignores them.
func ParseValue(value []byte) (int64, error) {
	dec := json.NewDecoder(bytes.NewReader(value))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil || m == nil {
		return 0, errors.New("not a JSON object")
	}
	n, ok := m["offset"].(json.Number)
	if !ok {
		return 0, errors.New(`no number "offset"`)
	}
	off, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || off < 0 {
		return 0, fmt.Errorf(`"offset" %s is not a non-negative 64-bit integer`, n)
	}
	return off, nil
}

// Key returns the exact key bytes Java MM2 writes and looks up for a partition of connector: compact JSON,
// members in Java HashMap order (cluster, partition, topic), strings escaped as Jackson escapes them.
func Key(connector string, p Partition) []byte {
	var b bytes.Buffer
	b.WriteByte('[')
	jacksonString(&b, connector)
	b.WriteString(`,{"cluster":`)
	jacksonString(&b, p.Cluster)
	b.WriteString(`,"partition":`)
	b.WriteString(strconv.Itoa(int(p.Partition)))
	b.WriteString(`,"topic":`)
	jacksonString(&b, p.Topic)
	b.WriteString("}]")
	return b.Bytes()
}

// jacksonString writes s as Jackson's JsonGenerator does: only '"', '\\' and control characters are escaped
// (\b \t \n \f \r by name, the others as \u00XX with upper-case hex); everything else, U+2028 and U+2029
// included, is written as UTF-8. Invalid UTF-8 becomes U+FFFD, as a Java String would hold it.
func jacksonString(b *bytes.Buffer, s string) {
	const hex = "0123456789ABCDEF"
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteByte(hex[r>>4])
			b.WriteByte(hex[r&0xF])
		case r == utf8.RuneError:
			b.WriteRune(utf8.RuneError)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// quote shows a record key or value in a message, cut to a readable length.
func quote(b []byte) string {
	if b == nil {
		return "null"
	}
	const limit = 200
	if len(b) > limit {
		return strconv.Quote(string(b[:limit])) + "..."
	}
	return strconv.Quote(string(b))
}

// bodyOffset is one entry of the KIP-875 body, members in the order Connect's own GET .../offsets uses for
// MirrorSourceConnector partitions.
type bodyOffset struct {
	Partition bodyPartition `json:"partition"`
	Offset    bodyValue     `json:"offset"`
}

type bodyPartition struct {
	Cluster   string `json:"cluster"`
	Partition int32  `json:"partition"`
	Topic     string `json:"topic"`
}

type bodyValue struct {
	Offset int64 `json:"offset"`
}

// Body returns the body of PATCH /connectors/{name}/offsets that sets every offset, compact:
//
//	{"offsets":[{"partition":{"cluster":"A","partition":0,"topic":"t1"},"offset":{"offset":41}}]}
func Body(offsets []Offset) []byte { return body(offsets, "") }

// BodyLines is Body with one offset per line, for people to read and diff.
func BodyLines(offsets []Offset) []byte { return body(offsets, "\n") }

func body(offsets []Offset, nl string) []byte {
	var b bytes.Buffer
	b.WriteString(`{"offsets":[`)
	for i, o := range offsets {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(nl)
		if nl != "" {
			b.WriteString("  ")
		}
		b.Write(entryJSON(o))
	}
	if len(offsets) > 0 {
		b.WriteString(nl)
	}
	b.WriteString("]}")
	b.WriteString(nl)
	return b.Bytes()
}

func entryJSON(o Offset) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(bodyOffset{
		Partition: bodyPartition{Cluster: o.Source.Cluster, Partition: o.Source.Partition, Topic: o.Source.Topic},
		Offset:    bodyValue{Offset: o.Offset},
	})
	if err != nil {
		panic(err) // strings and integers always encode
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}
