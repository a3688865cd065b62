package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Delivery is the outcome of one produced record.
type Delivery struct {
	Topic     string
	Partition int32
	Offset    int64 // offset assigned by the target; valid when Err is nil and Unconfirmed is false
	Err       error
	// Unconfirmed: librdkafka reported success without an offset. It does so for records of a request whose
	// outcome it did not learn (a timeout) once a later request of the partition succeeded, assuming the earlier
	// one was written. That holds unless the broker had no state for this producer on the partition (a partition
	// that just became writable): it then accepts the later request as the first, and the records reported here
	// are not on the target. The caller must not count them as written.
	Unconfirmed bool
	Opaque      any       // what the caller passed to Produce
	At          time.Time // with WithDeliveryTimes: when the report arrived, to within a burst of reports (see events)
}

// Header is a record header; Value nil is a null header value.
type Header struct {
	Key   string
	Value []byte
}

// Producer produces records and hands every delivery report to its handler. Delivery reports are drained by
// a goroutine of its own for the producer's whole life, so librdkafka never blocks on a full events channel.
type Producer struct {
	p      *ckafka.Producer
	done   chan struct{} // closed when the delivery goroutine has finished
	closed chan struct{} // closed by Close, stops log forwarding
	stats  *statsMailbox // WithStats; fed by the delivery goroutine
	log    *slog.Logger
	fatal  atomic.Pointer[error]
	auth   atomic.Pointer[error]
}

// NewProducer creates a producer from librdkafka properties; onDelivery is called from one goroutine, in
// delivery order per partition, and must not block for long.
func NewProducer(props map[string]string, log *slog.Logger, onDelivery func(Delivery), opts ...Option) (*Producer, error) {
	o := applyOptions(opts)
	logs := make(chan ckafka.LogEvent, 64)
	cm := o.apply(configMap(props, logs))
	// The delivery report keeps the topic-partition, offset and opaque without copying key and value back.
	(*cm)["go.delivery.report.fields"] = "none"
	// confluent-kafka-go allocates a million-slot events channel and a million-slot produce channel per
	// producer (24 MB); the benchmark found them to be most of kmirror's heap. Deliveries are drained at once by
	// the goroutine below, so a small events channel suffices; the produce channel is never used.
	(*cm)["go.events.channel.size"] = 10000
	(*cm)["go.produce.channel.size"] = 0
	p, err := ckafka.NewProducer(cm)
	if err != nil {
		return nil, fmt.Errorf("create producer: %w", withoutValues(err))
	}
	pr := &Producer{p: p, done: make(chan struct{}), closed: make(chan struct{}), log: log, stats: newStatsMailbox(o.onStats)}
	go forwardLogs(logs, pr.closed, log)
	go pr.events(onDelivery, o)
	return pr, nil
}

// reportBurst bounds how many delivery reports share one reading of the clock.
const reportBurst = 64

func (p *Producer) events(onDelivery func(Delivery), o options) {
	defer close(p.done)
	events := p.p.Events()
	// Reports come in bursts (a produce response acknowledges a batch). The clock is read for the first report
	// of a burst and again every reportBurst reports: a report that was waiting in the channel arrived no later
	// than when the previous one was taken, so the time is off by the handling of at most that many reports.
	var at time.Time
	burst := 0
	for ev := range events {
		switch e := ev.(type) {
		case *ckafka.Message:
			if o.deliveryTimes {
				if burst == 0 {
					at = time.Now()
				}
				if burst++; burst == reportBurst || len(events) == 0 {
					burst = 0
				}
			}
			d := Delivery{Partition: e.TopicPartition.Partition, Offset: int64(e.TopicPartition.Offset), Opaque: e.Opaque, At: at}
			if e.TopicPartition.Topic != nil {
				d.Topic = *e.TopicPartition.Topic
			}
			if e.TopicPartition.Error != nil {
				d.Err = e.TopicPartition.Error
			} else if d.Offset < 0 {
				d.Unconfirmed = true
			}
			onDelivery(d)
		case *ckafka.Stats:
			p.stats.put(e.String())
		case ckafka.Error:
			if e.IsFatal() {
				err := error(e)
				p.fatal.Store(&err)
				p.log.Log(context.Background(), FatalLevel(err), "producer fatal error", "error", e)
			} else if IsAuthentication(e) {
				err := error(e)
				p.auth.Store(&err)
				p.log.Debug("producer authentication failed", "error", e)
			} else {
				p.log.Debug("producer error", "error", e)
			}
		}
	}
}

// FatalLevel is the level a producer's fatal error is logged at: Error, except the gap-less guarantee's after
// the caller purged the producer's requests (purgedGapless): the caller is dropping the producer anyway.
func FatalLevel(err error) slog.Level {
	if IsGapless(err) && purgedGapless(err.Error()) {
		return slog.LevelDebug
	}
	return slog.LevelError
}

// Fatal returns the producer's fatal error, if librdkafka reported one; the producer is unusable then.
func (p *Producer) Fatal() error {
	if e := p.fatal.Load(); e != nil {
		return *e
	}
	return nil
}

// AuthFailure returns the failed SASL handshake librdkafka reported, if any (see IsAuthentication): records
// then wait for a connection that cannot succeed.
func (p *Producer) AuthFailure() error {
	if e := p.auth.Load(); e != nil {
		return *e
	}
	return nil
}

// Produce queues one record for partition of topic. It returns ErrQueueFull when librdkafka's queue is full.
func (p *Producer) Produce(topic string, partition int32, key, value []byte, headers []Header, ts time.Time, opaque any) error {
	m := &ckafka.Message{
		TopicPartition: ckafka.TopicPartition{Topic: &topic, Partition: partition},
		Key:            key,
		Value:          value,
		Timestamp:      ts,
		Opaque:         opaque,
	}
	if len(headers) > 0 {
		m.Headers = make([]ckafka.Header, len(headers))
		for i, h := range headers {
			m.Headers[i] = ckafka.Header{Key: h.Key, Value: h.Value}
		}
	}
	return p.produce(m)
}

func (p *Producer) produce(m *ckafka.Message) error {
	err := p.p.Produce(m, nil)
	if err == nil {
		return nil
	}
	var kerr ckafka.Error
	if errors.As(err, &kerr) && kerr.Code() == ckafka.ErrQueueFull {
		return ErrQueueFull
	}
	return fmt.Errorf("produce to %s [%d]: %w", *m.TopicPartition.Topic, m.TopicPartition.Partition, err)
}

// Flush waits until every queued record has been delivered (or failed) and its report handled, or ctx ends.
// It returns how many records were still outstanding.
func (p *Producer) Flush(ctx context.Context) int {
	for {
		left := p.p.Flush(100)
		if left == 0 || ctx.Err() != nil {
			return left
		}
	}
}

// Purge drops the records still queued in the producer, and with inFlight also those in flight, whose outcome
// is then unknown. Their delivery reports fail. A run that lost its lease calls it so that nothing it queued is
// written after its successor started.
func (p *Producer) Purge(inFlight bool) error {
	flags := ckafka.PurgeQueue | ckafka.PurgeNonBlocking
	if inFlight {
		flags |= ckafka.PurgeInFlight
	}
	if err := p.p.Purge(flags); err != nil {
		return fmt.Errorf("purge producer: %w", err)
	}
	return nil
}

// Outstanding returns the number of records queued or in flight.
func (p *Producer) Outstanding() int { return p.p.Len() }

// Close closes the producer (without waiting for outstanding records: Flush first) and waits for the delivery
// goroutine to finish.
func (p *Producer) Close() {
	p.p.Close()
	<-p.done
	p.stats.close()
	close(p.closed)
}
