package mm2offsets

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The vectors of Kafka's UtilsTest.testMurmur2.
func TestMurmur2JavaVectors(t *testing.T) {
	for in, want := range map[string]int32{
		"21": -973932308, "foobar": -790332482, "a-little-bit-long-string": -985981536,
		"a-little-bit-longer-string": -1486304829, "lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
		"abc": 479470107,
	} {
		require.Equal(t, want, murmur2([]byte(in)), in)
	}
	// toPositive(-790332482) = 1357151166; % 10 = 6
	require.Equal(t, int32(6), PartitionFor([]byte("foobar"), 10))
}

// The value round-trips through the reader, and a key Java MM2 wrote lands where Java put it: Kafka 4.1.1's
// dedicated MirrorMaker wrote the key below to partition 22 of mm2-offsets.src1.internal (25 partitions).
func TestWriterMatchesReader(t *testing.T) {
	off, err := ParseValue(Value(41))
	require.NoError(t, err)
	require.Equal(t, int64(41), off)
	require.Equal(t, `{"offset":0}`, string(Value(0)))
	require.Equal(t, int32(22), PartitionFor(Key(DefaultConnector, Partition{Cluster: "src1", Topic: "exp-topic-1", Partition: 2}), DefaultPartitions))
}
