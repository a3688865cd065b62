package mirror

// OffsetSync is the record MirrorSourceTask writes to the offset-syncs topic: the record at
// UpstreamOffset of the source partition was written at DownstreamOffset of its remote partition.
type OffsetSync struct {
	// Topic is the upstream (source cluster) topic name, not the remote name.
	Topic            string
	Partition        int32
	UpstreamOffset   int64
	DownstreamOffset int64
}

// Key encodes the record key: topic STRING, partition INT32.
func (o OffsetSync) Key() ([]byte, error) {
	var w schemaWriter
	w.string("topic", o.Topic)
	w.int32(o.Partition)
	return w.encoded("offset sync key")
}

// Value encodes the record value: upstreamOffset INT64, offset INT64. Unlike heartbeats and
// checkpoints it has no version header; it is always 16 bytes.
func (o OffsetSync) Value() ([]byte, error) {
	var w schemaWriter
	w.int64(o.UpstreamOffset)
	w.int64(o.DownstreamOffset)
	return w.bytes()
}

// TopicPartition returns the upstream topic-partition the sync is for.
func (o OffsetSync) TopicPartition() TopicPartition {
	return TopicPartition{Topic: o.Topic, Partition: o.Partition}
}

// DecodeOffsetSync decodes an offset-sync record.
func DecodeOffsetSync(key, value []byte) (OffsetSync, error) {
	return decodeRecord("offset sync", key, value, func(k *schemaReader, o *OffsetSync) {
		o.Topic = k.string("topic")
		o.Partition = k.int32("partition")
	}, func(v *schemaReader, o *OffsetSync) {
		o.UpstreamOffset = v.int64("upstreamOffset")
		o.DownstreamOffset = v.int64("offset")
	})
}
