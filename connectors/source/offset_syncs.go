package source

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// maxQueuedOffsetSyncs caps the offset syncs a task holds back while the gate (syncGate) keeps them out of
// librdkafka; past it, the newest of each partition is kept, as in MM2's pending map. MM2's semaphore allows 10
// in flight and keeps one pending sync per partition beyond; at kmirror's speed a partition's 10,000 records
// are acknowledged within one or two round trips to the sync cluster, so syncs that fall due together
// collapsed into one per partition (18-70 per 10,000 records against MM2's 43-69, measured by
// TestOffsetSyncsDenseEnough), and Java tools translating from them re-read thousands of records. A sync is 24
// bytes: holding 1,000 costs nothing and lets every sync MM2's rules ask for go out while a batch lingers
// (50 ms, clientconfig's offsetSyncsLingerMs) and travels: at 300,000 records/s a task's syncs fall due at
// 3,000 a second.
const maxQueuedOffsetSyncs = 1000

// offsetSyncer sends a source task's offset syncs to the offset-syncs topic. Which syncs to send is decided per
// partition (mirror.PartitionSyncs, on the delivery path, without a shared lock); this type queues them, hands
// them to the producer as the gate it shares with the worker's other tasks allows, and owns its share of the
// producer. Every sync is sent, in order per partition; only past maxQueuedOffsetSyncs does a newer sync of a
// partition replace its queued one.
//
// A sync that fails is queued again unless a newer one of its partition has been queued or sent since, and
// sending pauses for syncRetryBackoff. MM2 drops it, and the next sync of the partition supersedes it; but a
// partition's last sync may have no successor for hours (a quiet topic), and a task can start before its
// connector has created the offset-syncs topic, which made every sync of its first seconds fail at once and
// left Java tools without a sync until the next one fell due. Retrying only the newest keeps each partition's
// syncs in increasing order on the topic: an older sync after a newer one reads, to Java's OffsetSyncStore, as
// a rewind.
type offsetSyncer struct {
	producer syncProducer // shared with the worker's other tasks of the connector (producerPool)
	gate     *syncGate    // shared with them too
	giveBack func()       // returns the shared producer to the pool
	topic    string
	log      *slog.Logger

	mu         sync.Mutex
	queue      []mirror.OffsetSync // to send, oldest first; a partition may have several
	over       map[mirror.TopicPartition]mirror.OffsetSync
	overOrder  []mirror.TopicPartition         // partitions in over, oldest first: they go after the queue
	latest     map[mirror.TopicPartition]int64 // the highest upstream offset queued or sent per partition
	inflight   int
	retryAfter time.Time // no sending before (after a failure)
	retryTimer *time.Timer
	failing    bool // since the last failure, nothing was delivered
	closed     bool // the task let go: nothing is sent or retried any more
}

// syncProducer is what the syncer asks of its producer; *kafka.Producer answers it. The opaque's delivery
// report must come back to (*syncSend).delivered.
type syncProducer interface {
	Produce(topic string, partition int32, key, value []byte, headers []kafka.Header, ts time.Time, opaque any) error
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
	return &offsetSyncer{producer: p.producer, gate: p.gate, giveBack: release, topic: topic, log: log,
		over: map[mirror.TopicPartition]mirror.OffsetSync{}, latest: map[mirror.TopicPartition]int64{}}, nil
}

// send queues a sync and sends what the gate allows.
func (s *offsetSyncer) send(sync mirror.OffsetSync) {
	tp := sync.TopicPartition()
	s.mu.Lock()
	s.latest[tp] = max(s.latest[tp], sync.UpstreamOffset)
	if _, over := s.over[tp]; over || len(s.queue) >= maxQueuedOffsetSyncs {
		if !over {
			s.overOrder = append(s.overOrder, tp)
		}
		s.over[tp] = sync
	} else {
		s.queue = append(s.queue, sync)
	}
	s.mu.Unlock()
	s.fire()
}

// fire produces the queued syncs the gate admits.
func (s *offsetSyncer) fire() {
	s.mu.Lock()
	if s.closed || time.Now().Before(s.retryAfter) {
		s.mu.Unlock()
		return // closed, or the retry timer fires again
	}
	var batch []mirror.OffsetSync
	if len(s.queue) > 0 {
		n := s.gate.admit(s, len(s.queue), syncSize(s.queue[0]), s.fire)
		batch = append(batch, s.queue[:n]...)
		s.queue = s.queue[n:]
		s.inflight += n
	}
	// A partition's sync in over is newer than its queued ones, and while it is there the partition's next
	// syncs replace it: moving it behind the queue keeps every partition's order.
	for len(s.overOrder) > 0 && len(s.queue) < maxQueuedOffsetSyncs {
		tp := s.overOrder[0]
		s.overOrder = s.overOrder[1:]
		s.queue = append(s.queue, s.over[tp])
		delete(s.over, tp)
	}
	s.mu.Unlock()
	for _, sync := range batch {
		if err := s.produce(sync); err != nil {
			s.release()
			s.failed(sync, err)
		}
	}
}

// syncSize estimates a sync's bytes in a record batch, for the gate's bounds.
func syncSize(sync mirror.OffsetSync) int64 {
	return int64(2+len(sync.Topic)+4) + 16 + syncRecordOverhead // key: topic, partition; value: two offsets
}

func (s *offsetSyncer) produce(sync mirror.OffsetSync) error {
	key, value, err := mirror.Encode(sync)
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
	if s.latest[tp] <= sync.UpstreamOffset {
		s.queue = append([]mirror.OffsetSync{sync}, s.queue...)
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

// release accounts for a sync the gate admitted that was delivered, failed or never produced; it may open the
// gate, and the waiting syncers then send (this one too).
func (s *offsetSyncer) release() {
	s.mu.Lock()
	s.inflight--
	s.mu.Unlock()
	s.gate.done()
}

// flush waits until every queued and in-flight sync of this task has been sent, or ctx ends.
func (s *offsetSyncer) flush(ctx context.Context) {
	for ctx.Err() == nil {
		s.fire()
		s.mu.Lock()
		idle := s.inflight == 0 && len(s.queue) == 0 && len(s.overOrder) == 0
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
