package kafkabench

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// Payload is a pool of record values: pseudo-random log lines, so that compression has something to work
// with (lz4 shrinks them about 2x), without costing the loader CPU per record.
type Payload struct{ buf []byte }

// NewPayload builds a 4 MiB pool.
func NewPayload() *Payload {
	r := rand.New(rand.NewPCG(1, 2))
	words := []string{"order", "customer", "id", "amount", "currency", "EUR", "USD", "status", "created", "shipped",
		"warehouse", "item", "quantity", "price", "discount", "region", "eu-west", "us-east", "true", "false", "null"}
	buf := make([]byte, 0, 4<<20+1024)
	for len(buf) < 4<<20 {
		buf = append(buf, `{"ts":`...)
		buf = strconv.AppendInt(buf, 1700000000000+r.Int64N(1e9), 10)
		for range 6 {
			buf = append(buf, `,"`...)
			buf = append(buf, words[r.IntN(len(words))]...)
			buf = append(buf, `":"`...)
			buf = append(buf, words[r.IntN(len(words))]...)
			buf = strconv.AppendUint(buf, r.Uint64N(1<<30), 36)
			buf = append(buf, '"')
		}
		buf = append(buf, "}\n"...)
	}
	return &Payload{buf: buf}
}

// Value returns a value of size bytes for record i (a slice of the pool; producers copy it).
func (p *Payload) Value(i int64, size int) []byte {
	if size > len(p.buf) {
		size = len(p.buf)
	}
	span := int64(len(p.buf) - size)
	off := (i * 7919) % max(span, 1)
	return p.buf[off : off+int64(size)]
}

// producer wraps a librdkafka producer whose delivery reports are drained by a goroutine that counts them.
type producer struct {
	p         *ckafka.Producer
	delivered atomic.Int64
	failed    atomic.Int64
	firstErr  atomic.Pointer[error]
	done      chan struct{}
}

func newProducer(props map[string]string) (*producer, error) {
	cm := ckafka.ConfigMap{"go.delivery.report.fields": "none", "log_level": 3}
	for k, v := range props {
		cm[k] = v
	}
	p, err := ckafka.NewProducer(&cm)
	if err != nil {
		return nil, fmt.Errorf("create producer: %w", err)
	}
	pr := &producer{p: p, done: make(chan struct{})}
	go func() {
		defer close(pr.done)
		for ev := range p.Events() {
			if m, ok := ev.(*ckafka.Message); ok {
				if m.TopicPartition.Error != nil {
					pr.failed.Add(1)
					err := m.TopicPartition.Error
					pr.firstErr.CompareAndSwap(nil, &err)
				} else {
					pr.delivered.Add(1)
				}
			}
		}
	}()
	return pr, nil
}

// produce queues m, waiting while the queue is full.
func (p *producer) produce(ctx context.Context, m *ckafka.Message) error {
	for {
		err := p.p.Produce(m, nil)
		if err == nil {
			return nil
		}
		var kerr ckafka.Error
		if !errors.As(err, &kerr) || kerr.Code() != ckafka.ErrQueueFull {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(time.Millisecond)
	}
}

func (p *producer) flushAndClose(ctx context.Context) error {
	for p.p.Flush(100) > 0 && ctx.Err() == nil {
	}
	p.p.Close()
	<-p.done
	if e := p.firstErr.Load(); e != nil {
		return fmt.Errorf("%d records not delivered, first: %w", p.failed.Load(), *e)
	}
	return nil
}

// LoadConfig describes a bulk load.
type LoadConfig struct {
	Bootstrap   string
	Partitions  []TP  // records are dealt round-robin over these
	Records     int64 // in all
	Size        int   // value bytes per record
	Compression string
	Payload     *Payload
}

// Load produces cfg.Records records as fast as the cluster takes them, and returns when all are acknowledged.
func Load(ctx context.Context, cfg LoadConfig) error {
	if len(cfg.Partitions) == 0 || cfg.Records <= 0 {
		return nil
	}
	p, err := newProducer(map[string]string{
		"bootstrap.servers": cfg.Bootstrap, "acks": "all", "enable.idempotence": "false", "linger.ms": "50",
		"batch.size": "1000000", "batch.num.messages": "100000", "compression.type": cfg.Compression,
		"queue.buffering.max.kbytes": "262144", "queue.buffering.max.messages": "0",
	})
	if err != nil {
		return err
	}
	topics := make([]*string, len(cfg.Partitions))
	for i := range cfg.Partitions {
		topics[i] = &cfg.Partitions[i].Topic
	}
	for i := range cfg.Records {
		k := i % int64(len(cfg.Partitions))
		m := &ckafka.Message{
			TopicPartition: ckafka.TopicPartition{Topic: topics[k], Partition: cfg.Partitions[k].Partition},
			Value:          cfg.Payload.Value(i, cfg.Size),
		}
		if err := p.produce(ctx, m); err != nil {
			_ = p.flushAndClose(ctx)
			return fmt.Errorf("load: %w", err)
		}
	}
	return p.flushAndClose(ctx)
}

// RateConfig describes a fixed offered load.
type RateConfig struct {
	Bootstrap   string
	Partitions  []TP
	Rate        int // records per second
	Duration    time.Duration
	Size        int
	Compression string
	Payload     *Payload
}

// ProduceAtRate offers cfg.Rate records per second for cfg.Duration. Every value starts with the send time
// (Unix nanoseconds, big endian), which the latency reader compares with the time it receives the record.
// It returns the number of records acknowledged.
func ProduceAtRate(ctx context.Context, cfg RateConfig) (int64, error) {
	return producePaced(ctx, ctx, cfg, func(_ int64, _ TP, m *ckafka.Message) {
		now := time.Now()
		binary.BigEndian.PutUint64(m.Value, uint64(now.UnixNano()))
		m.Timestamp = now
	})
}

// producePaced offers cfg.Rate records per second for cfg.Duration, or until ctx ends, dealt round-robin over
// cfg.Partitions; stamp writes the first 8 bytes of record i's value (the rest is payload). Producing and the
// final flush run under flush, so that a caller who needs every queued record on the cluster can let them
// outlive ctx. The producer is idempotent and lingers 5 ms: at linger 0 it would send one request per record,
// and the source broker's CPU for that would disturb what is measured on 2 cores.
func producePaced(ctx, flush context.Context, cfg RateConfig, stamp func(i int64, tp TP, m *ckafka.Message)) (int64, error) {
	p, err := newProducer(map[string]string{
		"bootstrap.servers": cfg.Bootstrap, "acks": "all", "enable.idempotence": "true", "linger.ms": "5",
		"compression.type": cfg.Compression,
	})
	if err != nil {
		return 0, err
	}
	topics := make([]*string, len(cfg.Partitions))
	for i := range cfg.Partitions {
		topics[i] = &cfg.Partitions[i].Topic
	}
	size := max(cfg.Size, 8)
	total := int64(float64(cfg.Rate) * cfg.Duration.Seconds())
	start := time.Now()
	var i int64
	for i < total && ctx.Err() == nil {
		due := min(int64(time.Since(start).Seconds()*float64(cfg.Rate))+1, total)
		for ; i < due && ctx.Err() == nil; i++ {
			k := i % int64(len(cfg.Partitions))
			v := make([]byte, size)
			copy(v[8:], cfg.Payload.Value(i, size-8))
			m := &ckafka.Message{TopicPartition: ckafka.TopicPartition{Topic: topics[k], Partition: cfg.Partitions[k].Partition}, Value: v}
			stamp(i, cfg.Partitions[k], m)
			if err := p.produce(flush, m); err != nil {
				_ = p.flushAndClose(flush)
				return p.delivered.Load(), err
			}
		}
		time.Sleep(time.Millisecond)
	}
	err = p.flushAndClose(flush)
	return p.delivered.Load(), err
}
