package connectors

import (
	"log/slog"
	"strconv"
	"time"
)

// CapDelivery bounds how long the replication producer may hold a record: below the runtime's settle window
// (tasks.Lease.Settle), less librdkafka's one-second timeout scan and some network. This is what makes the
// lease a fence on the Kafka side too: a worker that stalls (SIGSTOP, a long GC or VM pause) with records
// queued finds them expired when it resumes, instead of writing them after its units moved to other workers.
// linger.ms must stay below the delivery timeout, so it is capped at half of it.
func CapDelivery(producer map[string]string, settle time.Duration, log *slog.Logger) {
	limit := settle - min(time.Second, settle/3)
	limitMs := max(limit.Milliseconds(), 100)
	if v, err := strconv.ParseInt(producer["message.timeout.ms"], 10, 64); err != nil || v == 0 || v > limitMs {
		if err == nil {
			log.Info("capping the replication producer's delivery timeout below the worker's settle window, so that a stalled worker never writes after its work moved",
				"requested_ms", v, "message_timeout_ms", limitMs, "settle", settle)
		}
		producer["message.timeout.ms"] = strconv.FormatInt(limitMs, 10)
	}
	delete(producer, "delivery.timeout.ms")
	for _, k := range []string{"linger.ms", "queue.buffering.max.ms"} {
		if v, err := strconv.ParseFloat(producer[k], 64); err == nil && v >= float64(limitMs)/2 {
			log.Info("capping linger.ms below the capped delivery timeout", "requested_ms", v, "linger_ms", limitMs/2)
			producer[k] = strconv.FormatInt(limitMs/2, 10)
		}
	}
}
