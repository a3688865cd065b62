package source

import (
	"log/slog"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// producerPool shares one producer among the tasks of a worker that would otherwise each open an identical
// one. Offset syncs are the case: every source task writes a few of them, and a producer per task costs a
// librdkafka instance with its threads and buffers (the benchmark measured a tenth of kmirror's CPU at eight
// tasks). Deliveries are routed back to their sender through the record's opaque value.
type producerPool = clientPool[pooledProducer]

type pooledProducer struct {
	producer *kafka.Producer
	gate     *syncGate // its users' batches (offset syncs: see syncGate)
}

// deliveryHandler receives the deliveries of the records it produced through a pooled producer.
type deliveryHandler interface {
	delivered(d kafka.Delivery)
}

func newProducerPool(log *slog.Logger) *producerPool {
	open := func(props map[string]string) (pooledProducer, error) {
		p, err := kafka.NewProducer(props, log, func(d kafka.Delivery) {
			if h, ok := d.Opaque.(deliveryHandler); ok {
				h.delivered(d)
			}
		})
		if err != nil {
			return pooledProducer{}, err
		}
		return pooledProducer{producer: p, gate: newSyncGate(props)}, nil
	}
	// The last user gives the producer back after flushing its own syncs within its run's budget
	// (offsetSyncer.flush in settle); what it gave up on goes with the producer, as the stop contract
	// (tasks.Task) drops what is queued once the budget is spent.
	closeProducer := func(p pooledProducer) { p.producer.Close() }
	return newClientPool(open, closeProducer)
}
