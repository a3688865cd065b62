package clientconfig

import (
	"cmp"
	"fmt"
	"strconv"
	"strings"
)

// libDefaultMaxInFlight is librdkafka's max.in.flight when nothing sets it.
const libDefaultMaxInFlight = 1000000

// checkDeliveryOrder rejects a replication producer whose delivery reports can
// arrive out of produce order within a partition. A source task matches each
// delivery report to the oldest source offset it forwarded on that partition
// (sourcePartition in package connectors); a report that overtakes an earlier,
// still unacknowledged record would let kmirror commit past that record, and a
// restart would then skip it for good.
//
// librdkafka keeps per-partition order with the idempotent producer, or with
// one request in flight per connection. Otherwise a batch that fails with a
// retriable error goes back into the partition queue (at its original place)
// while later batches already in flight are acknowledged first: the reports
// come out of order ("Reordering" in librdkafka's INTRODUCTION.md).
//
// retries=0 is no way out. librdkafka re-queues, without counting it as a
// retry, every batch that failed for stale leadership (NOT_LEADER_OR_FOLLOWER,
// LEADER_NOT_AVAILABLE, ...) or that was never sent (timed out in the output
// queue, connection lost before the write): rd_kafka_handle_Produce_error sets
// incr_retry to 0 for those and rd_kafka_retry_msgq retries while
// retries + 0 <= max retries, that is even when retries is 0. Only a failure
// that would have been counted is reported at once; with that alone a task
// would be safe (fail stops the partition's progress, the restart resumes at
// the last acknowledged offset + 1), but the uncounted retries reorder all the
// same. So the rule ignores retries.
//
// One request in flight without idempotence is accepted: it is how Connect's
// non-idempotent task producer keeps order (see producer). It does not cover
// everything: librdkafka drains the requests still in flight to an old leader
// before producing to the new one only for the idempotent producer, so a
// leader change can still reorder, which is why idempotence stays the default.
func (t *translator) checkDeliveryOrder() {
	if t.role != ReplicationProducer {
		// The other producers do not match reports to records by position.
		return
	}
	const idemKey, flightKey = "enable.idempotence", "max.in.flight.requests.per.connection"
	if idem, err := parseBool(t.out[idemKey]); err != nil || idem {
		return
	}
	inflight := int64(libDefaultMaxInFlight)
	if v, ok := t.out[flightKey]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
		if err != nil {
			return // reported where the value came from
		}
		inflight = n
	}
	if inflight <= 1 {
		return
	}
	// The operator's spelling: max.in.flight.requests.per.connection or
	// librdkafka's max.in.flight.
	name := t.from[flightKey]
	key := name
	if name == "" {
		// kmirror's own defaults never get here; rather than a key the operator
		// did not write, name the one that turned idempotence off.
		name, key = flightKey, cmp.Or(t.from[idemKey], flightKey)
	}
	t.fail(key, "%s=%d with %s can reorder deliveries, so kmirror could commit past a record the target never acknowledged; "+
		"set enable.idempotence=true or max.in.flight.requests.per.connection=1", name, inflight, t.idempotenceOff())
}

// idempotenceOff says what turned idempotence off, for checkDeliveryOrder's
// message: the operator, or one of the settings with which Java's producer
// turns a default idempotence off (see idempotence).
func (t *translator) idempotenceOff() string {
	if src := t.from["enable.idempotence"]; src != "" {
		return src + "=false"
	}
	if a := t.out["acks"]; a != "" && a != "all" && a != "-1" {
		return fmt.Sprintf("idempotence off (acks=%s turns it off)", a)
	}
	if t.out["retries"] == "0" {
		return "idempotence off (retries=0 turns it off)"
	}
	return fmt.Sprintf("idempotence off (more than %d requests in flight turn it off)", idempotentMaxFlight)
}
