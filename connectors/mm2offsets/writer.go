package mm2offsets

import "strconv"

// The writing side of Connect's offsets topic, for kmirror's exactly-once mode: a source task writes its
// offsets into this topic inside the transaction that carries the records they cover, exactly as Connect's
// ExactlyOnceWorkerSourceTask does, so that Java MM2 (and kmirror mm2-offsets) read them as their own.

// DefaultPartitions is the partition count Connect gives its offsets topic (offset.storage.partitions).
const DefaultPartitions = 25

// Value is the record value of a source offset: {"offset":<offset>}, as JsonConverter writes it.
func Value(offset int64) []byte {
	b := make([]byte, 0, 32)
	b = append(b, `{"offset":`...)
	b = strconv.AppendInt(b, offset, 10)
	return append(b, '}')
}

// PartitionFor is the partition of the offsets topic Connect's producer writes key to: Kafka's default
// partitioner, toPositive(murmur2(key)) % partitions. The reader keeps the last value per key, so a writer
// must put a key in the same partition as every other writer for last-write-wins to hold.
func PartitionFor(key []byte, partitions int) int32 {
	if partitions <= 0 {
		return 0
	}
	return int32(uint32(murmur2(key)&0x7fffffff) % uint32(partitions))
}

// murmur2 is Kafka's Utils.murmur2 (the Java client's key hash).
func murmur2(data []byte) int32 {
	const (
		seed uint32 = 0x9747b28c
		m    uint32 = 0x5bd1e995
		r           = 24
	)
	n := len(data)
	h := seed ^ uint32(n)
	for i := 0; i+4 <= n; i += 4 {
		k := uint32(data[i]) | uint32(data[i+1])<<8 | uint32(data[i+2])<<16 | uint32(data[i+3])<<24
		k *= m
		k ^= k >> r
		k *= m
		h *= m
		h ^= k
	}
	tail := n &^ 3
	switch n % 4 {
	case 3:
		h ^= uint32(data[tail+2]) << 16
		fallthrough
	case 2:
		h ^= uint32(data[tail+1]) << 8
		fallthrough
	case 1:
		h ^= uint32(data[tail])
		h *= m
	}
	h ^= h >> 13
	h *= m
	h ^= h >> 15
	return int32(h)
}
