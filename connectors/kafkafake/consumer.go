package kafkafake

import (
	"fmt"
	"sync"
	"time"
)

// ConsumerOptions configures a consumer.
type ConsumerOptions struct {
	// ReadCommitted reads as isolation.level=read_committed: up to the last stable offset, without the records
	// of aborted transactions.
	ReadCommitted bool
}

// Consumer reads a Log as kmirror's assign-only consumer reads a cluster, with auto.offset.reset=error: a
// position outside the log stops the partition with an out-of-range error until Seek or Assign moves it.
type Consumer struct {
	l      *Log
	rc     bool
	mu     sync.Mutex
	parts  []*reading
	next   int // round robin over parts
	cached map[PartitionID][2]int64
	closed bool
}

type reading struct {
	id      PartitionID
	pos     int64 // next offset to read, or OffsetBeginning / OffsetEnd until the first fetch resolves it
	stopped bool  // an error was reported; nothing more until Seek or Assign
}

// NewConsumer returns a consumer of the log with nothing assigned.
func (l *Log) NewConsumer(o ConsumerOptions) *Consumer {
	return &Consumer{l: l, rc: o.ReadCommitted, cached: map[PartitionID][2]int64{}}
}

// Assign replaces the assignment with starts.
func (c *Consumer) Assign(starts []Start) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return ErrClosed
	}
	c.parts = c.parts[:0]
	for _, s := range starts {
		c.parts = append(c.parts, &reading{id: PartitionID{s.Topic, s.Partition}, pos: s.Offset})
	}
	c.next = 0
	return nil
}

// Seek moves one assigned partition to offset, and resumes it if an error had stopped it.
func (c *Consumer) Seek(topic string, partition int32, offset int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range c.parts {
		if r.id == (PartitionID{topic, partition}) {
			r.pos, r.stopped = offset, false
			return nil
		}
	}
	return fmt.Errorf("seek %s [%d] to %d: not assigned: %w", topic, partition, offset, ErrState)
}

// Watermarks returns a partition's log start and end (with ReadCommitted, its last stable offset).
func (c *Consumer) Watermarks(topic string, partition int32, _ time.Duration) (low, high int64, err error) {
	start, end, stable, err := c.l.Offsets(topic, partition)
	if err != nil {
		return 0, 0, fmt.Errorf("query watermarks of %s [%d]: %w", topic, partition, err)
	}
	if c.rc {
		end = stable
	}
	return start, end, nil
}

// CachedWatermarks returns the watermarks seen by the last fetch of the partition.
func (c *Consumer) CachedWatermarks(topic string, partition int32) (low, high int64, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w, ok := c.cached[PartitionID{topic, partition}]
	if !ok {
		return 0, 0, fmt.Errorf("cached watermarks of %s [%d]: not fetched yet: %w", topic, partition, ErrState)
	}
	return w[0], w[1], nil
}

// Position returns, per assigned partition of starts, the offset of the next record the consumer will return
// (past markers and records it skipped); partitions without a known position are left out.
func (c *Consumer) Position(starts []Start) (map[Start]int64, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[Start]int64{}
	for _, s := range starts {
		for _, r := range c.parts {
			if r.id == (PartitionID{s.Topic, s.Partition}) && r.pos >= 0 {
				out[Start{Topic: s.Topic, Partition: s.Partition}] = r.pos
			}
		}
	}
	return out, nil
}

// Poll waits up to timeout for the next record, taking the assigned partitions in turn. It returns
// (Record{}, false, nil) when nothing arrived, a *PartitionError for a partition's problem, and the errors
// given to Log.FailNextPoll.
func (c *Consumer) Poll(timeout time.Duration) (Record, bool, error) {
	deadline := time.Now().Add(timeout)
	for {
		rec, ok, wake, err := c.pollOnce()
		if ok || err != nil {
			return rec, ok, err
		}
		left := time.Until(deadline)
		if left <= 0 {
			return Record{}, false, nil
		}
		timer := time.NewTimer(left)
		select {
		case <-wake:
			timer.Stop()
		case <-timer.C:
			return Record{}, false, nil
		}
	}
}

// pollOnce returns the next record or error, if any, and otherwise a channel closed at the log's next change.
func (c *Consumer) pollOnce() (Record, bool, <-chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.closed {
		return Record{}, false, nil, ErrClosed
	}
	if len(l.pollErr) > 0 {
		err := l.pollErr[0]
		l.pollErr = l.pollErr[1:]
		return Record{}, false, nil, err
	}
	for i := range c.parts {
		r := c.parts[(c.next+i)%len(c.parts)]
		rec, ok, err := c.fetchLocked(r)
		if ok || err != nil {
			c.next = (c.next + i + 1) % len(c.parts)
			return rec, ok, nil, err
		}
	}
	return Record{}, false, l.changed, nil
}

// fetchLocked reads the next visible record of one partition, moving its position past what it skips.
func (c *Consumer) fetchLocked(r *reading) (Record, bool, error) {
	if r.stopped {
		return Record{}, false, nil
	}
	part, err := c.l.partitionLocked(r.id.Topic, r.id.Partition)
	if err != nil {
		r.stopped = true
		return Record{}, false, &PartitionError{Topic: r.id.Topic, Partition: r.id.Partition, Offset: r.pos, Err: ErrUnknownTopic}
	}
	limit := part.end
	if c.rc {
		limit = part.stable()
	}
	c.cached[r.id] = [2]int64{part.start, limit}
	switch r.pos {
	case OffsetBeginning:
		r.pos = part.start
	case OffsetEnd:
		r.pos = part.end
	}
	if r.pos < part.start || r.pos > part.end {
		r.stopped = true
		return Record{}, false, &PartitionError{Topic: r.id.Topic, Partition: r.id.Partition, Offset: r.pos, Err: ErrOffsetOutOfRange}
	}
	for _, e := range part.entries {
		if e.offset < r.pos {
			continue
		}
		if e.offset >= limit {
			break
		}
		if e.visible(c.rc) {
			r.pos = e.offset + 1
			return Record{topic: r.id.Topic, partition: r.id.Partition, offset: e.offset, m: e.msg}, true, nil
		}
	}
	r.pos = max(r.pos, limit) // markers, aborted records and gaps below the limit are read past
	return Record{}, false, nil
}

// Admin returns an admin client of the consumer's cluster.
func (c *Consumer) Admin() (*Admin, error) { return c.l.Admin(), nil }

// Close ends the consumer.
func (c *Consumer) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}
