package source

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafkafake"
)

// fakeSource is a source cluster's admin client over an in-memory log (kafkafake), with the kafka wrappers' value
// types: it answers topicShapeReader, topicIDReader and sourceLogReader as *kafka.Admin does.
type fakeSource struct {
	log *kafkafake.Log

	mu   sync.Mutex
	fail error // every request fails with it while set
	asks int   // LogOffsets requests
	ends int   // ... of them without log starts
}

func newFakeSource() *fakeSource { return &fakeSource{log: kafkafake.NewLog()} }

func (f *fakeSource) failing(err error) {
	f.mu.Lock()
	f.fail = err
	f.mu.Unlock()
}

func (f *fakeSource) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail
}

func (f *fakeSource) TopicIDs(ctx context.Context, topics []string) (map[string]string, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.log.Admin().TopicIDs(ctx, topics)
}

func (f *fakeSource) TopicShapes(ctx context.Context, topics []string) (map[string]kafka.TopicShape, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	shapes, err := f.log.Admin().TopicShapes(ctx, topics)
	if err != nil {
		return nil, err
	}
	out := make(map[string]kafka.TopicShape, len(shapes))
	for name, s := range shapes {
		out[name] = kafka.TopicShape{ID: s.ID, Partitions: s.Partitions}
	}
	return out, nil
}

// errWholeRequest is the real admin client's answer when one partition of a LogOffsets request is of a deleted
// topic: the whole request fails, which is why the watches leave such partitions out.
var errWholeRequest = errors.New("ListOffsets: unknown topic or partition")

func (f *fakeSource) LogOffsets(ctx context.Context, parts []kafka.PartitionID, readCommitted, starts bool) (map[kafka.PartitionID]kafka.LogOffsets, map[kafka.PartitionID]error, error) {
	if err := f.err(); err != nil {
		return nil, nil, err
	}
	f.mu.Lock()
	f.asks++
	if !starts {
		f.ends++
	}
	f.mu.Unlock()
	ids := make([]kafkafake.PartitionID, len(parts))
	for i, p := range parts {
		ids[i] = kafkafake.PartitionID{Topic: p.Topic, Partition: p.Partition}
	}
	logs, failed, err := f.log.Admin().LogOffsets(ctx, ids, readCommitted, starts)
	if err != nil {
		return nil, nil, err
	}
	if len(failed) > 0 {
		return nil, nil, errWholeRequest
	}
	out := make(map[kafka.PartitionID]kafka.LogOffsets, len(logs))
	for id, lo := range logs {
		out[kafka.PartitionID{Topic: id.Topic, Partition: id.Partition}] = kafka.LogOffsets{Start: lo.Start, End: lo.End}
	}
	return out, nil, nil
}

var (
	_ topicShapeReader = (*fakeSource)(nil)
	_ topicIDReader    = (*fakeSource)(nil)
	_ sourceLogReader  = (*fakeSource)(nil)
	_ sourceLogReader  = (*kafka.Admin)(nil)
)

// fakeHeads is a source consumer over the in-memory log, read as a headReader.
type fakeHeads struct{ c *kafkafake.Consumer }

func (h fakeHeads) Assign(starts []kafka.Start) error {
	fs := make([]kafkafake.Start, len(starts))
	for i, s := range starts {
		fs[i] = kafkafake.Start{Topic: s.Topic, Partition: s.Partition, Offset: s.Offset}
	}
	return h.c.Assign(fs)
}

func (h fakeHeads) Poll(timeout time.Duration) (headRecord, bool, error) {
	rec, ok, err := h.c.Poll(timeout)
	var pe *kafkafake.PartitionError
	if errors.As(err, &pe) {
		err = &kafka.PartitionError{Topic: pe.Topic, Partition: pe.Partition, Offset: pe.Offset, Err: pe.Err}
	}
	return rec, ok, err
}

var _ headReader = fakeHeads{}
