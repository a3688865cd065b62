package connectors

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// producerPool shares one producer among the tasks of a worker that would otherwise each open an identical
// one. Offset syncs are the case: every source task writes a few of them, and a producer per task costs a
// librdkafka instance with its threads and buffers (the benchmark measured a tenth of kmirror's CPU at eight
// tasks). Deliveries are routed back to their sender through the record's opaque value.
type producerPool struct {
	log *slog.Logger

	mu        sync.Mutex
	producers map[string]*pooledProducer
}

type pooledProducer struct {
	producer *kafka.Producer
	gate     *syncGate // its users' batches (offset syncs: see syncGate)
	refs     int
}

// deliveryHandler receives the deliveries of the records it produced through a pooled producer.
type deliveryHandler interface {
	delivered(d kafka.Delivery)
}

func newProducerPool(log *slog.Logger) *producerPool {
	return &producerPool{log: log, producers: map[string]*pooledProducer{}}
}

// acquire returns the pool's producer for exactly these properties, creating it if needed, with the gate its
// users share, and a release function the caller must call once it no longer produces.
func (pp *producerPool) acquire(props map[string]string) (*kafka.Producer, *syncGate, func(), error) {
	key := poolKey(props)
	pp.mu.Lock()
	defer pp.mu.Unlock()
	entry, ok := pp.producers[key]
	if !ok {
		p, err := kafka.NewProducer(props, pp.log, func(d kafka.Delivery) {
			if h, ok := d.Opaque.(deliveryHandler); ok {
				h.delivered(d)
			}
		})
		if err != nil {
			return nil, nil, nil, err
		}
		entry = &pooledProducer{producer: p, gate: newSyncGate(props)}
		pp.producers[key] = entry
	}
	entry.refs++
	var once sync.Once
	release := func() { once.Do(func() { pp.release(key, entry) }) }
	return entry.producer, entry.gate, release, nil
}

func (pp *producerPool) release(key string, entry *pooledProducer) {
	pp.mu.Lock()
	entry.refs--
	last := entry.refs == 0
	if last {
		delete(pp.producers, key)
	}
	pp.mu.Unlock()
	if last {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		entry.producer.Flush(ctx)
		cancel()
		entry.producer.Close()
	}
}

func poolKey(props map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(props[k])
		b.WriteByte('\n')
	}
	return b.String()
}
