package kmtype

import "fmt"

// TopicShape is a topic's id (KIP-516) and partition count, as a cluster's admin client describes it.
type TopicShape struct {
	ID         string
	Partitions int
}

// TopicIDs keeps the id of each described topic: what an admin client's TopicIDs answers from its TopicShapes.
func TopicIDs(shapes map[string]TopicShape) map[string]string {
	out := make(map[string]string, len(shapes))
	for name, s := range shapes {
		out[name] = s.ID
	}
	return out
}

// PartitionError is a consumer error about one partition, e.g. an offset out of range. It lives here so that the
// Kafka wrappers and their in-memory stand-in report partition problems as one type.
type PartitionError struct {
	Topic     string
	Partition int32
	Offset    int64
	Err       error
}

func (e *PartitionError) Error() string {
	return fmt.Sprintf("consume %s [%d] at offset %d: %v", e.Topic, e.Partition, e.Offset, e.Err)
}

func (e *PartitionError) Unwrap() error { return e.Err }
