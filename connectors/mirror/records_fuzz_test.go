package mirror

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

// The record formats are read from topics anyone with write access can fill (Java MM2, another kmirror, a
// stray producer), so the decoders must turn any bytes into a value or an error, never a panic; and what kmirror
// writes must read back as written, or offset translation drifts silently. The seeds are the golden records of
// records_test.go plus the edges of the encoding: empty strings, the longest legal string, negative numbers.

// longest is the longest string Kafka's protocol STRING holds.
var longest = strings.Repeat("x", math.MaxInt16)

func FuzzOffsetSyncRoundTrip(f *testing.F) {
	f.Add("orders", int32(0), int64(41), int64(40))
	f.Add("", int32(-1), int64(math.MinInt64), int64(math.MaxInt64))
	f.Add("a.b-c_d\x00\xff", int32(math.MaxInt32), int64(-1), int64(0))
	f.Fuzz(func(t *testing.T, topic string, partition int32, upstream, downstream int64) {
		in := OffsetSync{Topic: topic, Partition: partition, UpstreamOffset: upstream, DownstreamOffset: downstream}
		key, kerr := in.Key()
		value, verr := in.Value()
		if !encoded(t, kerr, field{"topic", topic}) {
			return
		}
		if verr != nil || len(value) != 16 {
			t.Fatalf("offset sync value: %d bytes, error %v; want 16 bytes", len(value), verr)
		}
		out, err := DecodeOffsetSync(key, value)
		if err != nil {
			t.Fatalf("decode what was encoded: %v", err)
		}
		if out != in {
			t.Fatalf("round trip: got %+v, want %+v", out, in)
		}
	})
}

func FuzzCheckpointRoundTrip(f *testing.F) {
	f.Add("group-1", "A.orders", int32(3), int64(100), int64(90), "")
	f.Add("", "", int32(math.MinInt32), int64(math.MinInt64), int64(-1), "meta\x00\xfe")
	f.Add("g", "t", int32(0), int64(0), int64(0), longest)
	f.Fuzz(func(t *testing.T, group, topic string, partition int32, upstream, downstream int64, metadata string) {
		in := Checkpoint{Group: group, Topic: topic, Partition: partition, UpstreamOffset: upstream,
			DownstreamOffset: downstream, Metadata: metadata}
		key, kerr := in.Key()
		value, verr := in.Value()
		keyOK := encoded(t, kerr, field{"group", group}, field{"topic", topic})
		if valueOK := encoded(t, verr, field{"metadata", metadata}); !keyOK || !valueOK {
			return
		}
		out, err := DecodeCheckpoint(key, value)
		if err != nil {
			t.Fatalf("decode what was encoded: %v", err)
		}
		if out != in {
			t.Fatalf("round trip: got %+v, want %+v", out, in)
		}
	})
}

func FuzzHeartbeatRoundTrip(f *testing.F) {
	f.Add("A", "B", int64(1700000000000))
	f.Add("", "", int64(math.MinInt64))
	f.Add(longest, "\x00", int64(-1))
	f.Fuzz(func(t *testing.T, source, target string, timestamp int64) {
		in := Heartbeat{SourceClusterAlias: source, TargetClusterAlias: target, Timestamp: timestamp}
		key, kerr := in.Key()
		value, verr := in.Value()
		if !encoded(t, kerr, field{"sourceClusterAlias", source}, field{"targetClusterAlias", target}) {
			return
		}
		if verr != nil || len(value) != 10 {
			t.Fatalf("heartbeat value: %d bytes, error %v; want 10 bytes", len(value), verr)
		}
		out, err := DecodeHeartbeat(key, value)
		if err != nil {
			t.Fatalf("decode what was encoded: %v", err)
		}
		if out != in {
			t.Fatalf("round trip: got %+v, want %+v", out, in)
		}
	})
}

// field is a string field of a record, by name, in encoding order.
type field struct{ name, value string }

// encoded checks an encoder's error against the one rule that can fail it: a string longer than a protocol
// STRING, reported as ErrStringTooLong naming the first such field. It returns whether the encoding succeeded.
func encoded(t *testing.T, err error, fields ...field) bool {
	t.Helper()
	for _, f := range fields {
		if len(f.value) > math.MaxInt16 {
			if !errors.Is(err, ErrStringTooLong) || !strings.Contains(err.Error(), "field "+f.name+" ") {
				t.Fatalf("%s of %d bytes: got error %v, want ErrStringTooLong naming %s", f.name, len(f.value), err, f.name)
			}
			return false
		}
	}
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	return true
}

// FuzzDecodeRecords feeds arbitrary bytes to every decoder. A decoder either fails with ErrMalformedRecord or
// returns a record whose encoding is exactly the bytes it read (the decoders ignore trailing bytes, as Java does,
// and read the value's version without keeping it), so nothing is lost or invented in between.
func FuzzDecodeRecords(f *testing.F) {
	for _, rec := range [][2][]byte{
		{hexSeed("0001 41 0001 42"), hexSeed("0000 0000018bcfe56800")},                                                          // heartbeat
		{hexSeed("0007 67726f75702d31 0008 412e6f7264657273 00000003"), hexSeed("0000 0000000000000064 000000000000005a 0000")}, // checkpoint
		{hexSeed("0006 6f7264657273 00000000"), hexSeed("0000000000000029 0000000000000028")},                                   // offset sync
		{nil, nil},
		{hexSeed("ffff"), hexSeed("8000")},
		{hexSeed("7fff 00"), hexSeed("00")},
	} {
		f.Add(rec[0], rec[1])
	}
	f.Fuzz(func(t *testing.T, key, value []byte) {
		if o, err := DecodeOffsetSync(key, value); err != nil {
			requireMalformed(t, "offset sync", err)
		} else {
			k, kerr := o.Key()
			v, verr := o.Value()
			requirePrefix(t, "offset sync key", key, k, kerr)
			requirePrefix(t, "offset sync value", value, v, verr)
		}
		if c, err := DecodeCheckpoint(key, value); err != nil {
			requireMalformed(t, "checkpoint", err)
		} else {
			k, kerr := c.Key()
			v, verr := c.Value()
			requirePrefix(t, "checkpoint key", key, k, kerr)
			requirePrefix(t, "checkpoint value after its version", value[2:], v[2:], verr)
		}
		if h, err := DecodeHeartbeat(key, value); err != nil {
			requireMalformed(t, "heartbeat", err)
		} else {
			k, kerr := h.Key()
			v, verr := h.Value()
			requirePrefix(t, "heartbeat key", key, k, kerr)
			requirePrefix(t, "heartbeat value after its version", value[2:], v[2:], verr)
		}
	})
}

func requireMalformed(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, ErrMalformedRecord) {
		t.Fatalf("decode %s: error %v is not ErrMalformedRecord", what, err)
	}
	if !strings.Contains(err.Error(), "field ") {
		t.Fatalf("decode %s: error %q names no field", what, err)
	}
}

func requirePrefix(t *testing.T, what string, read, encoded []byte, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("re-encode the decoded %s: %v", what, err)
	}
	if !bytes.HasPrefix(read, encoded) {
		t.Fatalf("%s: re-encoded %x is not what was read from %x", what, encoded, read)
	}
}

// hexSeed decodes hex digits grouped by spaces.
func hexSeed(s string) []byte {
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		panic(err)
	}
	return b
}
