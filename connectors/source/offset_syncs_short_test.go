package source

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// syncTarget is the offset-syncs topic's partition behind a fake producer: produced syncs wait in order until
// the test delivers (writes) or fails the oldest, as librdkafka reports one partition's records.
type syncTarget struct {
	mu      sync.Mutex
	pending []*syncSend
	written []mirror.OffsetSync
	refuse  error // returned by Produce while set
}

func (p *syncTarget) Produce(topic string, partition int32, key, value []byte, _ []kafka.Header, _ time.Time, opaque any) error {
	if p.refuse != nil {
		return p.refuse
	}
	sync, err := mirror.DecodeOffsetSync(key, value)
	if err != nil {
		return err
	}
	ss := opaque.(*syncSend)
	if sync != ss.sync || partition != 0 || topic != ss.s.topic {
		return errors.New("the record is not the sync it reports")
	}
	p.mu.Lock()
	p.pending = append(p.pending, ss)
	p.mu.Unlock()
	return nil
}

// next reports the oldest pending sync: written (ok) or failed.
func (p *syncTarget) next(ok bool) bool {
	p.mu.Lock()
	if len(p.pending) == 0 {
		p.mu.Unlock()
		return false
	}
	ss := p.pending[0]
	p.pending = p.pending[1:]
	var d kafka.Delivery
	if ok {
		p.written = append(p.written, ss.sync)
	} else {
		d.Err = errors.New("broker said no")
	}
	p.mu.Unlock()
	ss.delivered(d)
	return true
}

func testSyncer(target *syncTarget) (*offsetSyncer, *bool) {
	released := false
	return &offsetSyncer{producer: target, gate: newSyncGate(map[string]string{"batch.num.messages": "3"}),
		giveBack: func() { released = true }, topic: "mm2-offset-syncs.B.internal", log: slog.New(slog.DiscardHandler),
		over: map[mirror.TopicPartition]mirror.OffsetSync{}, latest: map[mirror.TopicPartition]int64{}}, &released
}

// retryNow stands for the retry timer having fired.
func (s *offsetSyncer) retryNow() {
	s.mu.Lock()
	s.retryAfter = time.Time{}
	s.mu.Unlock()
	s.fire()
}

// Whatever fails on the way, a partition's syncs reach the topic in increasing upstream order (an older sync
// after a newer one reads as a rewind to Java's OffsetSyncStore), and the newest sync of every partition arrives.
func TestOffsetSyncsStayInOrderPerPartitionThroughFailures(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		target := &syncTarget{}
		s, _ := testSyncer(target)
		next := map[int32]int64{}
		newest := map[int32]int64{}
		steps := rapid.IntRange(1, 80).Draw(t, "steps")
		for range steps {
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0, 1:
				part := rapid.Int32Range(0, 2).Draw(t, "partition")
				next[part] += rapid.Int64Range(1, 5).Draw(t, "advance")
				newest[part] = next[part]
				s.send(mirror.OffsetSync{Topic: "orders", Partition: part, UpstreamOffset: next[part], DownstreamOffset: next[part] / 2})
			case 2:
				target.next(true)
			case 3:
				target.next(false)
			case 4:
				s.retryNow()
			}
		}
		// Then everything goes through.
		for range 10_000 {
			s.retryNow()
			if !target.next(true) {
				s.mu.Lock()
				idle := s.inflight == 0 && len(s.queue) == 0 && len(s.overOrder) == 0
				s.mu.Unlock()
				if idle {
					break
				}
			}
		}
		last := map[int32]int64{}
		for _, sync := range target.written {
			if prev, ok := last[sync.Partition]; ok && sync.UpstreamOffset <= prev {
				t.Fatalf("partition %d: sync %d written after %d: %v", sync.Partition, sync.UpstreamOffset, prev, target.written)
			}
			last[sync.Partition] = sync.UpstreamOffset
		}
		require.Equal(t, newest, last, "the newest sync of every partition arrives")
	})
}

// A partition's queue past maxQueuedOffsetSyncs keeps only its newest sync, behind the queued ones; flush returns
// once everything is written, and close gives the producer back and stops retrying.
func TestOffsetSyncsCollapseBeyondTheQueueAndFlush(t *testing.T) {
	target := &syncTarget{}
	s, released := testSyncer(target)
	target.refuse = errors.New("queue full")
	s.send(mirror.OffsetSync{Topic: "t", Partition: 0, UpstreamOffset: 1})
	require.True(t, s.failing, "a sync the producer refused counts as failed")
	target.refuse = nil
	for i := range int64(maxQueuedOffsetSyncs + 5) {
		s.send(mirror.OffsetSync{Topic: "t", Partition: 1, UpstreamOffset: 10 + i})
	}
	s.mu.Lock()
	require.Len(t, s.over, 1, "one sync per partition beyond the queue")
	require.Equal(t, int64(10+maxQueuedOffsetSyncs+4), s.over[mirror.TopicPartition{Topic: "t", Partition: 1}].UpstreamOffset)
	s.mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.flush(ctx)
	}()
	for {
		select {
		case <-done:
			require.NoError(t, ctx.Err(), "flush returned because all was written")
			require.Equal(t, mirror.OffsetSync{Topic: "t", Partition: 1, UpstreamOffset: 10 + maxQueuedOffsetSyncs + 4}, target.written[len(target.written)-1])
			require.Len(t, target.written, maxQueuedOffsetSyncs+1, "partition 0's retried sync and partition 1's syncs that fit the queue, then its newest")
			s.close()
			require.True(t, *released)
			s.failed(mirror.OffsetSync{Topic: "t", Partition: 0, UpstreamOffset: 99}, errors.New("late"))
			require.Empty(t, s.queue, "a closed syncer retries nothing")
			return
		default:
			if !target.next(true) {
				s.retryNow()
				runtime.Gosched()
			}
		}
	}
}
