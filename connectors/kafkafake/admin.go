package kafkafake

import (
	"context"
	"fmt"

	"github.com/kmirror/kmirror/kmtype"
)

// Admin answers what the source task asks a cluster's admin client: topic ids, partition counts, log offsets.
type Admin struct{ l *Log }

// Admin returns an admin client of the cluster.
func (l *Log) Admin() *Admin { return &Admin{l: l} }

// TopicIDs returns the id of each of topics that exists; missing topics are left out.
func (a *Admin) TopicIDs(ctx context.Context, topics []string) (map[string]string, error) {
	shapes, err := a.TopicShapes(ctx, topics)
	if err != nil {
		return nil, err
	}
	return kmtype.TopicIDs(shapes), nil
}

// TopicShapes is TopicIDs with each topic's partition count.
func (a *Admin) TopicShapes(ctx context.Context, topics []string) (map[string]TopicShape, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	out := map[string]TopicShape{}
	for _, name := range topics {
		if t, ok := a.l.topics[name]; ok {
			out[name] = TopicShape{ID: t.id, Partitions: len(t.parts)}
		}
	}
	return out, nil
}

// PartitionCount returns a topic's partition count.
func (a *Admin) PartitionCount(ctx context.Context, name string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	t, ok := a.l.topics[name]
	if !ok {
		return 0, fmt.Errorf("partition count of %s: %w", name, ErrUnknownTopic)
	}
	return len(t.parts), nil
}

// LogOffsets returns the end offsets of parts (with readCommitted the last stable offsets), and with starts
// their log start offsets too (-1 otherwise). Unknown partitions are left out, their errors returned.
func (a *Admin) LogOffsets(ctx context.Context, parts []PartitionID, readCommitted, starts bool) (map[PartitionID]LogOffsets, map[PartitionID]error, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	a.l.mu.Lock()
	defer a.l.mu.Unlock()
	out, errs := map[PartitionID]LogOffsets{}, map[PartitionID]error{}
	for _, id := range parts {
		part, err := a.l.partitionLocked(id.Topic, id.Partition)
		if err != nil {
			errs[id] = err
			continue
		}
		lo := LogOffsets{Start: -1, End: part.end}
		if readCommitted {
			lo.End = part.stable()
		}
		if starts {
			lo.Start = part.start
		}
		out[id] = lo
	}
	return out, errs, nil
}

// AuthFailure returns nil: the fake's admin client always authenticates.
func (a *Admin) AuthFailure() error { return nil }

// Close does nothing: the admin client holds nothing.
func (a *Admin) Close() {}
