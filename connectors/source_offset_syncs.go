package connectors

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// maxInflightOffsetSyncs is MM2's cap on offset syncs awaiting acknowledgement (OffsetSyncWriter's semaphore).
const maxInflightOffsetSyncs = 10

// offsetSyncer emits a source task's offset syncs to the offset-syncs topic, following MM2's rules (the
// decisions are mirror.OffsetSyncWriter's; this type owns the producer and the in-flight cap). A sync that
// fails to send is logged and dropped, as in MM2: the next one supersedes it.
type offsetSyncer struct {
	writer   *mirror.OffsetSyncWriter
	producer *kafka.Producer
	topic    string
	log      *slog.Logger

	mu       sync.Mutex
	inflight int
}

func newOffsetSyncer(props map[string]string, topic string, offsetLagMax int64, log *slog.Logger) (*offsetSyncer, error) {
	s := &offsetSyncer{writer: mirror.NewOffsetSyncWriter(offsetLagMax), topic: topic, log: log}
	p, err := kafka.NewProducer(props, log, s.delivered)
	if err != nil {
		return nil, err
	}
	s.producer = p
	return s, nil
}

// record notes that upstream offset of tp was written at downstream offset on the target.
func (s *offsetSyncer) record(tp mirror.TopicPartition, upstream, downstream int64) {
	s.writer.Record(tp, upstream, downstream)
	s.fire()
}

// promote turns delayed syncs into pending ones, so quiet partitions get an exact sync.
func (s *offsetSyncer) promote() {
	s.writer.PromoteDelayed()
	s.fire()
}

func (s *offsetSyncer) fire() {
	s.mu.Lock()
	room := maxInflightOffsetSyncs - s.inflight
	if room <= 0 {
		s.mu.Unlock()
		return
	}
	syncs := s.writer.TakePending(room)
	s.inflight += len(syncs)
	s.mu.Unlock()
	for _, sync := range syncs {
		if err := s.send(sync); err != nil {
			s.log.Warn("offset sync not sent", "topic", sync.Topic, "partition", sync.Partition, "error", err)
			s.release()
		}
	}
}

func (s *offsetSyncer) send(sync mirror.OffsetSync) error {
	key, err := sync.Key()
	if err != nil {
		return err
	}
	value, err := sync.Value()
	if err != nil {
		return err
	}
	return s.producer.Produce(s.topic, 0, key, value, nil, time.Time{}, nil)
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

// flush waits until every pending and in-flight sync has been sent, or ctx ends.
func (s *offsetSyncer) flush(ctx context.Context) {
	for ctx.Err() == nil {
		s.fire()
		s.mu.Lock()
		idle := s.inflight == 0 && s.writer.Pending() == 0
		s.mu.Unlock()
		if idle {
			return
		}
		s.producer.Flush(ctx)
	}
}

func (s *offsetSyncer) close() { s.producer.Close() }
