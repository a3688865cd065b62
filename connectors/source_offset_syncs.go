package connectors

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// maxInflightOffsetSyncs caps the offset syncs awaiting acknowledgement. MM2's semaphore allows 10; at
// kmirror's speed a partition's 10,000 records are acknowledged within one or two round trips to the sync
// cluster, so with 10 the syncs that fall due together collapsed into one pending sync per partition (18-70
// per 10,000 records against MM2's 43-69, measured by TestOffsetSyncsDenseEnough), and Java tools translating
// from them re-read thousands of records. A sync is 24 bytes: 100 in flight cost nothing and let every sync
// MM2's rules ask for go out.
const maxInflightOffsetSyncs = 100

// offsetSyncer sends a source task's offset syncs to the offset-syncs topic. Which syncs to send is decided per
// partition (mirror.PartitionSyncs, on the delivery path, without a shared lock); this type queues them, keeps
// MM2's in-flight cap, and owns the producer. A queued sync for a partition is replaced by a newer one in
// place, as in MM2's pending map. A sync that fails to send is logged and dropped, as in MM2: the next one
// supersedes it.
type offsetSyncer struct {
	producer *kafka.Producer // shared with the worker's other tasks of the connector (producerPool)
	giveBack func()          // returns the shared producer to the pool
	topic    string
	log      *slog.Logger

	mu       sync.Mutex
	pending  map[mirror.TopicPartition]mirror.OffsetSync
	order    []mirror.TopicPartition // pending partitions, oldest first
	inflight int
}

func newOffsetSyncer(pool *producerPool, props map[string]string, topic string, log *slog.Logger) (*offsetSyncer, error) {
	p, release, err := pool.acquire(props)
	if err != nil {
		return nil, err
	}
	return &offsetSyncer{producer: p, giveBack: release, topic: topic, log: log, pending: map[mirror.TopicPartition]mirror.OffsetSync{}}, nil
}

// send queues a sync and sends what the in-flight cap allows.
func (s *offsetSyncer) send(sync mirror.OffsetSync) {
	tp := sync.TopicPartition()
	s.mu.Lock()
	if _, queued := s.pending[tp]; !queued {
		s.order = append(s.order, tp)
	}
	s.pending[tp] = sync
	s.mu.Unlock()
	s.fire()
}

func (s *offsetSyncer) fire() {
	s.mu.Lock()
	var batch []mirror.OffsetSync
	for s.inflight < maxInflightOffsetSyncs && len(s.order) > 0 {
		tp := s.order[0]
		s.order = s.order[1:]
		batch = append(batch, s.pending[tp])
		delete(s.pending, tp)
		s.inflight++
	}
	s.mu.Unlock()
	for _, sync := range batch {
		if err := s.produce(sync); err != nil {
			s.log.Warn("offset sync not sent", "topic", sync.Topic, "partition", sync.Partition, "error", err)
			s.release()
		}
	}
}

func (s *offsetSyncer) produce(sync mirror.OffsetSync) error {
	key, err := sync.Key()
	if err != nil {
		return err
	}
	value, err := sync.Value()
	if err != nil {
		return err
	}
	return s.producer.Produce(s.topic, 0, key, value, nil, time.Time{}, s)
}

func (s *offsetSyncer) delivered(d kafka.Delivery) {
	if d.Err != nil {
		s.log.Warn("offset sync not delivered", "topic", s.topic, "error", d.Err)
	}
	s.release()
	s.fire()
}

func (s *offsetSyncer) release() {
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
}

// flush waits until every queued and in-flight sync of this task has been sent, or ctx ends.
func (s *offsetSyncer) flush(ctx context.Context) {
	for ctx.Err() == nil {
		s.fire()
		s.mu.Lock()
		idle := s.inflight == 0 && len(s.order) == 0
		s.mu.Unlock()
		if idle {
			return
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// close gives the shared producer back; the last task to let go of it closes it.
func (s *offsetSyncer) close() { s.giveBack() }
