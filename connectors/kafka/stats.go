package kafka

import (
	"sync"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Option configures a Consumer or a Producer when it is created.
type Option func(*options)

type options struct {
	statsEvery    time.Duration
	onStats       func(json string)
	deliveryTimes bool
}

func applyOptions(opts []Option) options {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	return o
}

// WithStats asks librdkafka for its statistics every interval (statistics.interval.ms) and hands each JSON
// document to fn, on a goroutine of the client's own (statsMailbox), one document at a time; fn is never called
// after Close has returned. A zero interval or a nil fn does nothing. The document has an entry per assigned
// or produced-to partition (2 to 7 KB each), so a client with thousands of partitions gets megabytes per
// interval: choose the interval by the partition count (the source task does).
func WithStats(interval time.Duration, fn func(json string)) Option {
	return func(o *options) {
		if interval > 0 && fn != nil {
			o.statsEvery, o.onStats = interval, fn
		}
	}
}

// WithDeliveryTimes makes a Producer's delivery reports carry when they arrived (Delivery.At), for latency
// metrics; without it At is zero and no clock is read.
func WithDeliveryTimes() Option { return func(o *options) { o.deliveryTimes = true } }

// apply sets statistics.interval.ms when statistics were asked for.
func (o options) apply(cm *ckafka.ConfigMap) *ckafka.ConfigMap {
	if o.onStats != nil {
		(*cm)["statistics.interval.ms"] = int(max(o.statsEvery.Milliseconds(), 1))
	}
	return cm
}

// statsMailbox hands statistics documents to a handler on a goroutine of its own, keeping only the newest
// document waiting: a slow handler sees fewer documents instead of making them queue up. Before it, the
// handler ran on the consumer's Poll and on the producer's delivery goroutine: at 1,250 partitions per client
// (documents of 2-9 MB, parsed twice) on a busy machine the producers' handlers fell behind their 5 s interval,
// documents piled up in the events channel (286 MB of them after 7 minutes, growing) and delivery reports
// waited behind them.
type statsMailbox struct {
	fn   func(json string)
	wake chan struct{} // capacity 1: a document is waiting
	stop chan struct{}
	done chan struct{}

	mu   sync.Mutex
	next string // the newest document not handed to fn yet
	has  bool
}

// newStatsMailbox starts the mailbox's goroutine; nil fn gives a nil mailbox, whose methods do nothing.
func newStatsMailbox(fn func(json string)) *statsMailbox {
	if fn == nil {
		return nil
	}
	m := &statsMailbox{fn: fn, wake: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	go m.run()
	return m
}

func (m *statsMailbox) run() {
	defer close(m.done)
	for {
		select {
		case <-m.stop:
			return
		case <-m.wake:
		}
		m.mu.Lock()
		doc, ok := m.next, m.has
		m.next, m.has = "", false
		m.mu.Unlock()
		if ok {
			m.fn(doc)
		}
	}
}

// put replaces the waiting document, if any, with doc. It never blocks.
func (m *statsMailbox) put(doc string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	m.next, m.has = doc, true
	m.mu.Unlock()
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// close stops the goroutine, dropping a waiting document; once it returns, fn is not called again.
func (m *statsMailbox) close() {
	if m == nil {
		return
	}
	close(m.stop)
	<-m.done
}
