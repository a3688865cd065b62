package mirror

// Checkpoint is the record MirrorCheckpointConnector writes to "<source>.checkpoints.internal" on the
// target: where a consumer group of the source should resume on the target.
type Checkpoint struct {
	Group string
	// Topic is the downstream (target cluster) topic name, e.g. "A.orders".
	Topic     string
	Partition int32
	// UpstreamOffset is the group's committed offset on the source.
	UpstreamOffset int64
	// DownstreamOffset is the translated offset on the target (the field Java calls "offset").
	DownstreamOffset int64
	// Metadata is the commit metadata of the upstream offset, "" when there is none.
	Metadata string
}

// Key encodes the record key: group STRING, topic STRING, partition INT32.
func (c Checkpoint) Key() ([]byte, error) {
	var w schemaWriter
	w.string("group", c.Group)
	w.string("topic", c.Topic)
	w.int32(c.Partition)
	return w.encoded("checkpoint key")
}

// Value encodes the record value: version INT16 (0), upstreamOffset INT64, offset INT64, metadata
// STRING.
func (c Checkpoint) Value() ([]byte, error) {
	var w schemaWriter
	w.int16(recordVersion)
	w.int64(c.UpstreamOffset)
	w.int64(c.DownstreamOffset)
	w.string("metadata", c.Metadata)
	return w.encoded("checkpoint value")
}

// TopicPartition returns the downstream topic-partition the checkpoint is for.
func (c Checkpoint) TopicPartition() TopicPartition {
	return TopicPartition{Topic: c.Topic, Partition: c.Partition}
}

// DecodeCheckpoint decodes a checkpoint record.
func DecodeCheckpoint(key, value []byte) (Checkpoint, error) {
	return decodeRecord("checkpoint", key, value, func(k *schemaReader, c *Checkpoint) {
		c.Group = k.string("group")
		c.Topic = k.string("topic")
		c.Partition = k.int32("partition")
	}, func(v *schemaReader, c *Checkpoint) {
		v.int16("version")
		c.UpstreamOffset = v.int64("upstreamOffset")
		c.DownstreamOffset = v.int64("offset")
		c.Metadata = v.string("metadata")
	})
}
