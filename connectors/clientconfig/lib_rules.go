package clientconfig

import (
	"strconv"
	"strings"
)

// checkLibRules enforces the cross-property rules librdkafka checks when a
// client is created, on the final properties: a pass-through key can break
// what the Java translation kept consistent, and the operator should hear it
// from Validate rather than at task start.
func (t *translator) checkLibRules() {
	if len(t.errs) > 0 {
		// The Java rules already found what to fix; do not say it twice.
		return
	}
	num := func(k string) (int64, bool) {
		v, ok := t.out[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 0, 64)
		return n, err == nil
	}
	origin := func(k string) string {
		if src := t.from[k]; src != "" {
			return src
		}
		return k
	}
	if base, ok := num("reconnect.backoff.ms"); ok {
		if max, ok := num("reconnect.backoff.max.ms"); ok && max < base {
			t.fail(origin("reconnect.backoff.max.ms"), "reconnect.backoff.max.ms (%d) must be >= reconnect.backoff.ms (%d)", max, base)
		}
	}
	switch t.kind {
	case kindProducer:
		idem, _ := parseBool(t.out["enable.idempotence"])
		if !idem {
			return
		}
		if n, ok := num("max.in.flight.requests.per.connection"); ok && n > idempotentMaxFlight {
			t.fail(origin("max.in.flight.requests.per.connection"), "max.in.flight must be at most 5 when enable.idempotence is true")
		}
		if n, ok := num("retries"); ok && n < 1 {
			t.fail(origin("retries"), "retries must be at least 1 when enable.idempotence is true")
		}
		if a, ok := t.out["acks"]; ok && a != "all" && strings.TrimSpace(a) != "-1" {
			t.fail(origin("acks"), "acks must be all when enable.idempotence is true")
		}
	case kindConsumer:
		if t.from["fetch.max.bytes"] == "" {
			return
		}
		fetch, _ := num("fetch.max.bytes")
		msg, ok := num("message.max.bytes")
		if !ok {
			msg = libConsumerMaxMsg
		}
		if fetch < msg {
			t.fail(origin("fetch.max.bytes"), "fetch.max.bytes (%d) must be >= message.max.bytes (%d)", fetch, msg)
		}
	}
}
