package kafkafake

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// ProducerOptions configures a producer.
type ProducerOptions struct {
	// TransactionalID makes the producer transactional (InitTransactions, then records only inside
	// transactions).
	TransactionalID string
	// Manual leaves every delivery to the test (Deliver, or Flush); otherwise a goroutine of the producer makes
	// them as records arrive, as librdkafka does.
	Manual bool
	// QueueLimit bounds the records queued; past it Produce returns ErrQueueFull. 0 means 100,000.
	QueueLimit int
}

// Producer writes to a Target through its fault schedule and reports every record's outcome to onDelivery,
// in order per partition, from one goroutine at a time.
type Producer struct {
	t          *Target
	o          ProducerOptions
	onDelivery func(Delivery)
	delivering sync.Mutex // held while making deliveries, so that they keep their order

	mu        sync.Mutex
	queue     []*pending
	fatal     error
	auth      error
	authUntil <-chan struct{} // the target's release that clears auth
	progress  chan struct{}   // closed and replaced when the queue changes
	epoch     uint64
	txn       *Txn // the open transaction's writes on the target
	txnFailed bool // a record of the open transaction failed
	closed    bool
	stop      chan struct{}
	done      chan struct{}
}

type pending struct {
	topic     string
	partition int32
	msg       Message
	opaque    any
	purged    bool
	held      <-chan struct{} // Delay: closed when the target releases it
}

// NewProducer returns a producer writing to the target.
func (t *Target) NewProducer(onDelivery func(Delivery), o ProducerOptions) *Producer {
	if o.QueueLimit <= 0 {
		o.QueueLimit = 100_000
	}
	p := &Producer{t: t, o: o, onDelivery: onDelivery, progress: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	if o.Manual {
		close(p.done)
	} else {
		go p.run()
	}
	return p
}

func (p *Producer) run() {
	defer close(p.done)
	for {
		p.mu.Lock()
		progress := p.progress
		p.mu.Unlock()
		p.t.mu.Lock()
		released := p.t.released
		p.t.mu.Unlock()
		p.Deliver(-1)
		select {
		case <-p.stop:
			return
		case <-progress:
		case <-released:
		}
	}
}

// changedLocked wakes whoever waits for the queue to change.
func (p *Producer) changedLocked() {
	close(p.progress)
	p.progress = make(chan struct{})
}

// Produce queues one record for partition of topic. It returns ErrQueueFull when the queue is full, and the
// fatal error once the producer has one.
func (p *Producer) Produce(topic string, partition int32, key, value []byte, headers []Header, ts time.Time, opaque any) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case p.closed:
		return ErrClosed
	case p.fatal != nil:
		return fmt.Errorf("produce to %s [%d]: %w", topic, partition, p.fatal)
	case p.o.TransactionalID != "" && p.txn == nil:
		return fmt.Errorf("produce to %s [%d] outside a transaction: %w", topic, partition, ErrState)
	case len(p.queue) >= p.o.QueueLimit:
		return ErrQueueFull
	}
	p.queue = append(p.queue, &pending{topic: topic, partition: partition, opaque: opaque,
		msg: Message{Key: key, Value: value, Headers: headers, Timestamp: ts}})
	p.changedLocked()
	return nil
}

// Forward produces a consumed record to the same partition of topic, with its key, value, headers and
// timestamp.
func (p *Producer) Forward(r Record, topic *string) error {
	return p.Produce(*topic, r.partition, r.m.Key, r.m.Value, r.m.Headers, r.m.Timestamp, nil)
}

// Deliver makes up to n deliveries (n < 0: all it can) and returns how many it made. A delayed record holds
// back the later ones of its partition; an authentication failure holds back all but purged records (in
// order per partition).
func (p *Producer) Deliver(n int) int {
	p.delivering.Lock()
	defer p.delivering.Unlock()
	made := 0
	for n < 0 || made < n {
		d, ok := p.deliverOne()
		if !ok {
			break
		}
		if d != nil {
			p.onDelivery(*d)
			made++
		}
	}
	return made
}

// deliverOne takes one attempt: it returns the delivery to report (nil when the attempt was held back), and
// false when no record can be attempted now.
func (p *Producer) deliverOne() (*Delivery, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	i := p.nextLocked()
	if i < 0 {
		return nil, false
	}
	it := p.queue[i]
	d := &Delivery{Topic: it.topic, Partition: it.partition, Offset: -1, Opaque: it.opaque, At: time.Now()}
	take := func() {
		p.queue = append(p.queue[:i], p.queue[i+1:]...)
		p.changedLocked()
	}
	if it.purged {
		take()
		d.Err = ErrPurged
		if p.txn != nil {
			p.txnFailed = true // librdkafka: a transaction with purged records can only be aborted
		}
		return d, true
	}
	if p.fatal == nil && p.t.fenced(p.o.TransactionalID, p.epoch) {
		p.fatal = ErrFenced
	}
	if p.fatal != nil {
		take()
		d.Err = p.fatal
		return d, true
	}
	fault, room, released := p.t.decide(it.topic, it.partition)
	switch fault {
	case Delay:
		it.held = released
		return nil, true
	case AuthFail:
		p.auth, p.authUntil = ErrAuthentication, released
		return nil, true
	case Refuse:
		d.Err = ErrTimedOut
	case TooLarge:
		d.Err = ErrRecordTooLarge
	case GoFatal:
		p.fatal, d.Err = ErrFatal, ErrFatal
	case Fence:
		if p.o.TransactionalID != "" {
			p.t.Fence(p.o.TransactionalID)
		}
		p.fatal, d.Err = ErrFenced, ErrFenced
	default: // Accept, DropAck, Unconfirmed: the record is written
		if !room {
			d.Err = ErrNoRoom
			break
		}
		off, err := p.writeLocked(it)
		switch {
		case err != nil:
			d.Err = err
		case fault == DropAck:
			d.Err = ErrTimedOut
		case fault == Unconfirmed:
			d.Unconfirmed = true
		default:
			d.Offset = off
		}
	}
	if d.Err != nil && p.txn != nil {
		p.txnFailed = true
	}
	take()
	return d, true
}

// nextLocked returns the index of the first record that may be attempted now, or -1.
func (p *Producer) nextLocked() int {
	authHeld := p.auth != nil && !closed(p.authUntil)
	if p.auth != nil && !authHeld {
		p.auth = nil
	}
	// Reports keep their order per partition: a record waiting (held, or behind a failed authentication) holds
	// back every later one of its partition, purged or not.
	blocked := map[PartitionID]bool{}
	for i, it := range p.queue {
		id := PartitionID{it.topic, it.partition}
		switch {
		case blocked[id]:
		case it.purged:
			return i
		case authHeld || it.held != nil && !closed(it.held):
			blocked[id] = true
		default:
			return i
		}
	}
	return -1
}

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func (p *Producer) writeLocked(it *pending) (int64, error) {
	var offs []int64
	var err error
	if p.txn != nil {
		offs, err = p.txn.Append(it.topic, it.partition, it.msg)
	} else {
		offs, err = p.t.Append(it.topic, it.partition, it.msg)
	}
	if err != nil {
		return -1, err
	}
	p.t.took()
	return offs[0], nil
}

// Flush waits until every queued record has been delivered (or failed) and its report handled, or ctx ends.
// It returns how many records were still outstanding.
func (p *Producer) Flush(ctx context.Context) int {
	for {
		if p.o.Manual {
			p.Deliver(-1)
		}
		p.mu.Lock()
		left, progress := len(p.queue), p.progress
		p.mu.Unlock()
		if left == 0 || ctx.Err() != nil {
			return left
		}
		p.t.mu.Lock()
		released := p.t.released
		p.t.mu.Unlock()
		select {
		case <-ctx.Done():
		case <-progress:
		case <-released:
		}
	}
}

// Purge fails the records still queued with ErrPurged, and with inFlight also the delayed ones, whose outcome
// is then unknown to the caller (the fake writes none of them). Without inFlight a delayed record still holds
// back the purged ones after it: their reports keep the partition's order.
func (p *Producer) Purge(inFlight bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, it := range p.queue {
		if inFlight || it.held == nil {
			it.purged = true
		}
	}
	p.changedLocked()
	return nil
}

// Outstanding returns the number of records queued or held.
func (p *Producer) Outstanding() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.queue)
}

// Fatal returns the producer's fatal error, if it has one; the producer is unusable then.
func (p *Producer) Fatal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fatal
}

// AuthFailure returns the failed authentication, until the target releases it.
func (p *Producer) AuthFailure() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.auth != nil && closed(p.authUntil) {
		p.auth = nil
	}
	return p.auth
}

// Admin returns an admin client of the target.
func (p *Producer) Admin() (*Admin, error) { return p.t.Admin(), nil }

// Close stops the producer without waiting for outstanding records (Flush first).
func (p *Producer) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	if !p.o.Manual {
		close(p.stop)
	}
	<-p.done
}
