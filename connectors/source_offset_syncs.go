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
// from them re-read thousands of records. A sync is 24 bytes: 1,000 in flight cost nothing and let every sync
// MM2's rules ask for go out, also while they linger 50 ms in the producer (clientconfig's offsetSyncsLingerMs:
// at 300,000 records/s a task's syncs fall due at 3,000 a second, 150 per linger).
const maxInflightOffsetSyncs = 1000

// offsetSyncer sends a source task's offset syncs to the offset-syncs topic. Which syncs to send is decided per
// partition (mirror.PartitionSyncs, on the delivery path, without a shared lock); this type queues them, keeps
// MM2's in-flight cap, and owns the producer. A queued sync for a partition is replaced by a newer one in
// place, as in MM2's pending map.
//
// A sync that fails is queued again unless a newer one of its partition has been queued or sent since, and
// sending pauses for syncRetryBackoff. MM2 drops it, and the next sync of the partition supersedes it; but a
// partition's last sync may have no successor for hours (a quiet topic), and a task can start before its
// connector has created the offset-syncs topic, which made every sync of its first seconds fail at once and
// left Java tools without a sync until the next one fell due. Retrying only the newest keeps each partition's
// syncs in increasing order on the topic: an older sync after a newer one reads, to Java's OffsetSyncStore, as
// a rewind.
type offsetSyncer struct {
	producer *kafka.Producer // shared with the worker's other tasks of the connector (producerPool)
	giveBack func()          // returns the shared producer to the pool
	topic    string
	log      *slog.Logger

	mu         sync.Mutex
	pending    map[mirror.TopicPartition]mirror.OffsetSync
	order      []mirror.TopicPartition // pending partitions, oldest first
	inflight   int
	sent       map[mirror.TopicPartition]int64 // the highest upstream offset handed to the producer per partition
	retryAfter time.Time                       // no sending before (after a failure)
	retryTimer *time.Timer
	failing    bool // since the last failure, nothing was delivered
	closed     bool // the task let go: nothing is sent or retried any more
}

// syncRetryBackoff is how long the syncer waits after a failed sync before it sends again.
const syncRetryBackoff = time.Second

// syncSend is the opaque of one produced sync: its delivery report comes back to the syncer with the sync.
type syncSend struct {
	s    *offsetSyncer
	sync mirror.OffsetSync
}

func (ss *syncSend) delivered(d kafka.Delivery) { ss.s.delivered(ss.sync, d) }

func newOffsetSyncer(pool *producerPool, props map[string]string, topic string, log *slog.Logger) (*offsetSyncer, error) {
	p, release, err := pool.acquire(props)
	if err != nil {
		return nil, err
	}
	return &offsetSyncer{producer: p, giveBack: release, topic: topic, log: log,
		pending: map[mirror.TopicPartition]mirror.OffsetSync{}, sent: map[mirror.TopicPartition]int64{}}, nil
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
	if s.closed || time.Now().Before(s.retryAfter) {
		s.mu.Unlock()
		return // closed, or the retry timer fires again
	}
	var batch []mirror.OffsetSync
	for s.inflight < maxInflightOffsetSyncs && len(s.order) > 0 {
		tp := s.order[0]
		s.order = s.order[1:]
		sync := s.pending[tp]
		batch = append(batch, sync)
		delete(s.pending, tp)
		s.inflight++
		s.sent[tp] = max(s.sent[tp], sync.UpstreamOffset)
	}
	s.mu.Unlock()
	for _, sync := range batch {
		if err := s.produce(sync); err != nil {
			s.release()
			s.failed(sync, err)
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
	return s.producer.Produce(s.topic, 0, key, value, nil, time.Time{}, &syncSend{s: s, sync: sync})
}

func (s *offsetSyncer) delivered(sync mirror.OffsetSync, d kafka.Delivery) {
	s.release()
	if d.Err != nil {
		s.failed(sync, d.Err)
		return
	}
	s.mu.Lock()
	recovered := s.failing
	s.failing = false
	s.mu.Unlock()
	if recovered {
		s.log.Info("offset syncs are delivered again", "topic", s.topic)
	}
	s.fire()
}

// failed queues a sync that could not be sent again, unless its partition has a newer one queued or sent, and
// holds sending back for syncRetryBackoff.
func (s *offsetSyncer) failed(sync mirror.OffsetSync, err error) {
	tp := sync.TopicPartition()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	first := !s.failing
	s.failing = true
	if _, queued := s.pending[tp]; !queued && s.sent[tp] <= sync.UpstreamOffset {
		s.pending[tp] = sync
		s.order = append([]mirror.TopicPartition{tp}, s.order...)
	}
	s.retryAfter = time.Now().Add(syncRetryBackoff)
	if s.retryTimer == nil {
		s.retryTimer = time.AfterFunc(syncRetryBackoff, s.fire)
	} else {
		s.retryTimer.Reset(syncRetryBackoff)
	}
	s.mu.Unlock()
	if first {
		s.log.Warn("offset sync not delivered; retrying the newest of each partition", "topic", s.topic,
			"partition", sync.Partition, "error", err)
	} else {
		s.log.Debug("offset sync not delivered", "topic", s.topic, "partition", sync.Partition, "error", err)
	}
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
func (s *offsetSyncer) close() {
	s.mu.Lock()
	s.closed = true
	if s.retryTimer != nil {
		s.retryTimer.Stop()
	}
	s.mu.Unlock()
	s.giveBack()
}
