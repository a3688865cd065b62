package mirror

import (
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	require.NoError(t, err)
	return b
}

// Golden bytes from the reference (§5.2-5.4).
func TestHeartbeatGolden(t *testing.T) {
	h := Heartbeat{SourceClusterAlias: "A", TargetClusterAlias: "B", Timestamp: 1700000000000}
	key, err := h.Key()
	require.NoError(t, err)
	require.Equal(t, unhex(t, "00 01 41 00 01 42"), key)
	value, err := h.Value()
	require.NoError(t, err)
	require.Equal(t, unhex(t, "00 00 00 00 01 8b cf e5 68 00"), value)

	decoded, err := DecodeHeartbeat(key, value)
	require.NoError(t, err)
	require.Equal(t, h, decoded)
}

func TestCheckpointGolden(t *testing.T) {
	c := Checkpoint{Group: "g1", Topic: "A.t1", Partition: 3, UpstreamOffset: 100, DownstreamOffset: 90}
	key, err := c.Key()
	require.NoError(t, err)
	require.Equal(t, unhex(t, "00 02 67 31 00 04 41 2e 74 31 00 00 00 03"), key)
	value, err := c.Value()
	require.NoError(t, err)
	require.Equal(t, unhex(t, "00 00 00 00 00 00 00 00 00 64 00 00 00 00 00 00 00 5a 00 00"), value)

	decoded, err := DecodeCheckpoint(key, value)
	require.NoError(t, err)
	require.Equal(t, c, decoded)
	require.Equal(t, TopicPartition{Topic: "A.t1", Partition: 3}, decoded.TopicPartition())
}

func TestOffsetSyncGolden(t *testing.T) {
	o := OffsetSync{Topic: "t1", Partition: 3, UpstreamOffset: 100, DownstreamOffset: 90}
	key, err := o.Key()
	require.NoError(t, err)
	require.Equal(t, unhex(t, "00 02 74 31 00 00 00 03"), key)
	value, err := o.Value()
	require.NoError(t, err)
	require.Equal(t, unhex(t, "00 00 00 00 00 00 00 64 00 00 00 00 00 00 00 5a"), value)

	decoded, err := DecodeOffsetSync(key, value)
	require.NoError(t, err)
	require.Equal(t, o, decoded)
	require.Equal(t, TopicPartition{Topic: "t1", Partition: 3}, decoded.TopicPartition())
}

// HeartbeatTest, CheckpointTest and OffsetSyncTest testSerde, plus edge values.
func TestRecordRoundTrips(t *testing.T) {
	for _, h := range []Heartbeat{
		{"source-1", "target-2", 1234567890},
		{"", "", 0},
		{"ünïcode", "b", -1},
	} {
		key, err := h.Key()
		require.NoError(t, err)
		value, err := h.Value()
		require.NoError(t, err)
		require.Len(t, value, 10)
		got, err := DecodeHeartbeat(key, value)
		require.NoError(t, err)
		require.Equal(t, h, got)
	}
	for _, c := range []Checkpoint{
		{"group-1", "topic-2", 3, 4, 5, "metadata-6"},
		{"", "", 0, 0, 0, ""},
		{"g", "t", -1, -1, 1 << 62, "m"},
	} {
		key, err := c.Key()
		require.NoError(t, err)
		value, err := c.Value()
		require.NoError(t, err)
		got, err := DecodeCheckpoint(key, value)
		require.NoError(t, err)
		require.Equal(t, c, got)
	}
	for _, o := range []OffsetSync{
		{"topic-1", 2, 3, 4},
		{"t", 2147483647, 9223372036854775807, -1},
	} {
		key, err := o.Key()
		require.NoError(t, err)
		value, err := o.Value()
		require.NoError(t, err)
		require.Len(t, value, 16)
		got, err := DecodeOffsetSync(key, value)
		require.NoError(t, err)
		require.Equal(t, o, got)
	}
}

// Every strict prefix of a valid key or value is reported as malformed, never decoded.
func TestRecordTruncation(t *testing.T) {
	decoders := map[string]struct {
		key, value []byte
		decode     func(key, value []byte) error
	}{
		"heartbeat": {
			key:   unhex(t, "00 01 41 00 01 42"),
			value: unhex(t, "00 00 00 00 01 8b cf e5 68 00"),
			decode: func(k, v []byte) error {
				_, err := DecodeHeartbeat(k, v)
				return err
			},
		},
		"checkpoint": {
			key:   unhex(t, "00 02 67 31 00 04 41 2e 74 31 00 00 00 03"),
			value: unhex(t, "00 00 00 00 00 00 00 00 00 64 00 00 00 00 00 00 00 5a 00 01 78"),
			decode: func(k, v []byte) error {
				_, err := DecodeCheckpoint(k, v)
				return err
			},
		},
		"offset sync": {
			key:   unhex(t, "00 02 74 31 00 00 00 03"),
			value: unhex(t, "00 00 00 00 00 00 00 64 00 00 00 00 00 00 00 5a"),
			decode: func(k, v []byte) error {
				_, err := DecodeOffsetSync(k, v)
				return err
			},
		},
	}
	for name, d := range decoders {
		require.NoError(t, d.decode(d.key, d.value), name)
		for n := range len(d.key) {
			require.ErrorIs(t, d.decode(d.key[:n], d.value), ErrMalformedRecord, "%s key cut to %d bytes", name, n)
		}
		for n := range len(d.value) {
			require.ErrorIs(t, d.decode(d.key, d.value[:n]), ErrMalformedRecord, "%s value cut to %d bytes", name, n)
		}
		require.ErrorIs(t, d.decode(nil, nil), ErrMalformedRecord, "%s tombstone", name)
	}
}

func TestRecordNegativeStringLength(t *testing.T) {
	_, err := DecodeOffsetSync(unhex(t, "ff ff 00 00 00 03"), make([]byte, 16))
	require.ErrorIs(t, err, ErrMalformedRecord)
	require.ErrorContains(t, err, "negative")
}

// Java ignores trailing bytes and reads any version with the version-0 layout.
func TestRecordDecodingIgnoresTrailingBytesAndVersion(t *testing.T) {
	key := unhex(t, "00 01 41 00 01 42 ff ff")
	value := unhex(t, "00 07 00 00 01 8b cf e5 68 00 01 02 03")
	h, err := DecodeHeartbeat(key, value)
	require.NoError(t, err)
	require.Equal(t, Heartbeat{"A", "B", 1700000000000}, h)

	o, err := DecodeOffsetSync(unhex(t, "00 02 74 31 00 00 00 03 99"), append(make([]byte, 16), 1))
	require.NoError(t, err)
	require.Equal(t, OffsetSync{Topic: "t1", Partition: 3}, o)
}

func TestRecordOversizeStrings(t *testing.T) {
	max := strings.Repeat("x", 32767)
	over := max + "x"

	key, err := Checkpoint{Group: max, Topic: "t"}.Key()
	require.NoError(t, err)
	c, err := DecodeCheckpoint(key, unhex(t, "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"))
	require.NoError(t, err)
	require.Equal(t, max, c.Group)

	_, err = Checkpoint{Group: over, Topic: "t"}.Key()
	require.ErrorIs(t, err, ErrStringTooLong)
	require.ErrorContains(t, err, "group")
	_, err = Checkpoint{Group: "g", Topic: "t", Metadata: over}.Value()
	require.ErrorIs(t, err, ErrStringTooLong)
	require.ErrorContains(t, err, "metadata")
	_, err = OffsetSync{Topic: over}.Key()
	require.ErrorIs(t, err, ErrStringTooLong)
	_, err = Heartbeat{SourceClusterAlias: "a", TargetClusterAlias: over}.Key()
	require.ErrorIs(t, err, ErrStringTooLong)
	// The limit is in UTF-8 bytes, not characters.
	_, err = Heartbeat{SourceClusterAlias: strings.Repeat("é", 16384)}.Key()
	require.ErrorIs(t, err, ErrStringTooLong)
}
