package clientconfig

import (
	"strings"
	"time"
)

// Java's producer defaults that the translation reasons with (Kafka 4.x).
const (
	javaLingerMs         = 5
	javaRequestTimeoutMs = 30000
	javaDeliveryTimeout  = 120000
	javaTxnTimeoutMs     = 60000
	idempotentMaxFlight  = 5
)

// offsetSyncsLingerMs is the offset-syncs producer's linger.ms unless the config sets one. librdkafka 2.11.1's
// idempotent producer sends one request per partition at a time, and while one is outstanding its broker
// thread spins on any record queued behind it whose linger.ms has expired. Offset syncs stream into one
// partition (one per 100 records of every replicated partition, thousands a second), so with Java's 5 ms
// the thread spun through every round trip: 1.6 CPU s per 5 GB replicated and 6% fewer records/s at
// tasks.max 4 (docs/benchmarks.md, 2026-12-03). A sync that waits 50 ms costs nothing: checkpoints are
// written every few seconds at most.
const offsetSyncsLingerMs = 50

// producer translates the ProducerConfig keys.
func (t *translator) producer() {
	acks := t.acks()
	retries, hasRetries := t.integer("retries", 0, javaIntMax)
	if hasRetries {
		t.emit("retries", "retries", itoa(retries))
	}
	inflight, hasInflight := t.integer("max.in.flight.requests.per.connection", 1, javaIntMax)
	if hasInflight {
		inflight = t.clamp("max.in.flight.requests.per.connection", inflight, 1, 1000000)
		t.emit("max.in.flight.requests.per.connection", "max.in.flight.requests.per.connection", itoa(inflight))
	}
	txnID, hasTxn := t.get("transactional.id")
	hasTxn = hasTxn && txnID != ""
	if hasTxn {
		t.emit("transactional.id", "transactional.id", txnID)
	}
	idem := t.idempotence(acks, hasRetries && retries == 0, hasInflight, inflight, hasTxn)
	if !hasInflight {
		switch {
		case idem:
			t.setDefault("max.in.flight.requests.per.connection", itoa(idempotentMaxFlight))
		case t.role.connectProducer():
			// Connect's non-idempotent task producer keeps order with one
			// request in flight.
			t.setDefault("max.in.flight.requests.per.connection", "1")
		default:
			// librdkafka's default of 1000000 would reorder on retry.
			t.setDefault("max.in.flight.requests.per.connection", "5")
		}
	}
	if acks == "" {
		t.setDefault("acks", "all")
	}

	linger := int64(javaLingerMs)
	if n, ok := t.integer("linger.ms", 0, javaLongMax); ok {
		linger = t.clamp("linger.ms", n, 0, 900000)
		t.emit("linger.ms", "linger.ms", itoa(linger))
	} else if t.role == OffsetSyncsProducer {
		// Only librdkafka's value: Java's checks of the user's timeouts reason with Java's default.
		t.setDefault("linger.ms", itoa(offsetSyncsLingerMs))
	}
	t.batching()
	t.compression()

	if n, ok := t.integer("max.request.size", 0, javaIntMax); ok {
		if n < 1000 {
			t.fail("max.request.size", "invalid value %d: librdkafka's message.max.bytes must be at least 1000", n)
		} else {
			t.emit("max.request.size", "message.max.bytes", itoa(t.clamp("max.request.size", n, 1000, 1000000000)))
		}
	} else {
		// Java allows 1048576-byte requests, librdkafka 1000000 bytes: without
		// this, records Java MM2 replicates would fail as too large.
		t.setDefault("message.max.bytes", "1048576")
	}

	txnTimeout := int64(javaTxnTimeoutMs)
	if n, ok := t.integer("transaction.timeout.ms", -javaIntMax-1, javaIntMax); ok {
		if n < 1000 {
			t.fail("transaction.timeout.ms", "invalid value %d: librdkafka requires at least 1000", n)
		} else {
			txnTimeout = n
			t.emit("transaction.timeout.ms", "transaction.timeout.ms", itoa(n))
		}
	}
	t.deliveryTimeout(linger, hasTxn, txnTimeout)
	if hasTxn {
		// librdkafka refuses socket.timeout.ms > transaction.timeout.ms + 100.
		if v, ok := t.out["socket.timeout.ms"]; ok {
			if n, err := parseInteger(v, 0, javaIntMax); err == nil && n > txnTimeout+100 {
				t.warn("request.timeout.ms", "socket.timeout.ms lowered to transaction.timeout.ms + 100 (%d), as librdkafka requires", txnTimeout+100)
				t.out["socket.timeout.ms"] = itoa(txnTimeout + 100)
			}
		}
	}

	if n, ok := t.integer("max.block.ms", 0, javaLongMax); ok {
		t.cfg.MaxBlock = millis(n)
	}
	t.partitioner()

	if b, ok := t.boolean("transaction.two.phase.commit.enable"); ok {
		if b {
			t.fail("transaction.two.phase.commit.enable", "two-phase commit transactions (KIP-939) are not supported by librdkafka")
		} else {
			t.drop("transaction.two.phase.commit.enable")
		}
	}
	for _, key := range []string{"metadata.max.idle.ms", "key.serializer", "value.serializer"} {
		if t.has(key) {
			t.drop(key)
		}
	}
	t.interceptors()
}

// acks checks acks and returns it as librdkafka spells it, or "" if unset.
func (t *translator) acks() string {
	v, ok := t.get("acks")
	if !ok {
		return ""
	}
	var a string
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case "all", "-1":
		a = "all"
	case "0", "1":
		a = s
	default:
		t.fail("acks", "invalid value %q: must be one of all, -1, 0, 1", v)
		return ""
	}
	t.emit("acks", "acks", a)
	return a
}

// idempotence follows ProducerConfig.postProcessAndValidateIdempotenceConfigs:
// idempotence is on unless the user turned it off, and a conflicting setting
// turns it off silently when the user did not ask for it, or is an error (with
// Java's message) when they did. kmirror's producers all default to on: the
// task producers because idempotence keeps per-partition order with 5
// requests in flight, the others because Java's producers do.
func (t *translator) idempotence(acks string, retriesZero, hasInflight bool, inflight int64, hasTxn bool) bool {
	const key = "enable.idempotence"
	user, set := t.boolean(key)
	acksNotAll := acks != "" && acks != "all"
	tooManyInflight := hasInflight && inflight > idempotentMaxFlight
	idem := !set || user
	if set && user {
		switch {
		case retriesZero:
			t.fail(key, "Must set retries to non-zero when using the idempotent producer.")
		case acksNotAll:
			t.fail(key, "Must set acks to all in order to use the idempotent producer. Otherwise we cannot guarantee idempotence.")
		case tooManyInflight:
			t.fail(key, "Must set max.in.flight.requests.per.connection to at most 5 to use the idempotent producer.")
		}
	} else if !set && (retriesZero || acksNotAll || tooManyInflight) {
		idem = false
	}
	if hasTxn && !idem {
		t.fail("transactional.id", "Cannot set a transactional.id without also enabling idempotence.")
	}
	if set {
		t.emit(key, key, boolString(idem))
	} else {
		t.setDefault(key, boolString(idem))
	}
	return idem
}

// batching maps batch.size and buffer.memory.
func (t *translator) batching() {
	// Java's batch.size is the per-partition buffer and send trigger;
	// librdkafka's bounds one MessageSet. Close enough to pass; Java's small
	// default is deliberately not injected.
	if n, ok := t.integer("batch.size", 0, javaIntMax); ok {
		if n == 0 {
			// Java: no batching at all.
			t.emit("batch.size", "batch.num.messages", "1")
		} else {
			t.emit("batch.size", "batch.size", itoa(n))
		}
	}
	if n, ok := t.integer("buffer.memory", 0, javaLongMax); ok {
		kb := (n + 1023) / 1024
		t.emit("buffer.memory", "queue.buffering.max.kbytes", itoa(t.clamp("buffer.memory", kb, 1, javaIntMax)))
		// Java caps the buffer by bytes only; librdkafka's 100000-message cap
		// would bind first for small records. 0 turns it off.
		t.setDefault("queue.buffering.max.messages", "0")
	}
}

// compression maps compression.type and the per-codec levels (KIP-390) to
// librdkafka's single compression.level, which applies to the codec in use.
func (t *translator) compression() {
	codec := "none"
	if v, ok := t.get("compression.type"); ok {
		switch c := strings.ToLower(strings.TrimSpace(v)); c {
		case "none", "gzip", "snappy", "lz4", "zstd":
			codec = c
			t.emit("compression.type", "compression.type", c)
		default:
			t.fail("compression.type", "invalid value %q: must be one of none, gzip, snappy, lz4, zstd", v)
		}
	}
	levels := []struct {
		key      string
		codec    string
		min, max int64
		lib      func(key string, n int64) int64
	}{
		{"compression.gzip.level", "gzip", -1, 9, func(_ string, n int64) int64 { return n }},
		{"compression.lz4.level", "lz4", 1, 17, func(key string, n int64) int64 {
			// Java's default 9 selects lz4-java's fast compressor, which is
			// librdkafka's default; other levels are LZ4 HC, capped at 12.
			if n == 9 {
				return -1
			}
			if n > 12 {
				t.warn(key, "%d lowered to 12, librdkafka's highest LZ4 level", n)
				return 12
			}
			return n
		}},
		{"compression.zstd.level", "zstd", -131072, 22, func(key string, n int64) int64 {
			switch {
			case n < 0:
				t.warn(key, "negative (fast) zstd levels are not available in librdkafka; using zstd's default level 3")
				return -1
			case n == 0:
				return -1 // zstd's 0 means its default, 3
			case n > 12:
				t.warn(key, "%d lowered to 12, the highest compression.level librdkafka accepts", n)
				return 12
			}
			return n
		}},
	}
	for _, l := range levels {
		n, ok := t.integer(l.key, l.min, l.max)
		if !ok {
			continue
		}
		if l.codec == "gzip" && n == 0 {
			t.fail(l.key, "invalid value 0: must be -1 or between 1 and 9")
			continue
		}
		if codec != l.codec {
			t.cfg.Dropped = append(t.cfg.Dropped, l.key)
			continue
		}
		t.emit(l.key, "compression.level", itoa(l.lib(l.key, n)))
	}
}

// deliveryTimeout follows KafkaProducer.configureDeliveryTimeout, with the
// Connect task producers waiting for ever (librdkafka's 0) by default, and
// keeps the value within transaction.timeout.ms as librdkafka requires.
func (t *translator) deliveryTimeout(linger int64, hasTxn bool, txnTimeout int64) {
	const key = "delivery.timeout.ms"
	request := int64(javaRequestTimeoutMs)
	if v, ok := t.in["request.timeout.ms"]; ok {
		if n, err := parseInteger(v, 0, javaIntMax); err == nil {
			request = n
		}
	}
	floor := min(linger+request, javaIntMax)
	n, set := t.integer(key, 0, javaIntMax)
	if set {
		if n < floor {
			t.fail(key, "delivery.timeout.ms should be equal to or larger than linger.ms + request.timeout.ms (%d)", floor)
			return
		}
		if hasTxn && n > txnTimeout {
			t.warn(key, "%d lowered to transaction.timeout.ms (%d), as librdkafka requires", n, txnTimeout)
			n = txnTimeout
		}
		t.emit(key, "message.timeout.ms", itoa(n))
		return
	}
	switch {
	case hasTxn:
		// librdkafka then derives it from transaction.timeout.ms.
	case t.role.connectProducer():
		// Replicated data must never expire in the producer queue.
		t.setDefault("message.timeout.ms", "0")
	default:
		t.setDefault("message.timeout.ms", itoa(max(javaDeliveryTimeout, floor)))
	}
}

// partitioner maps Java's partitioner classes to librdkafka's partitioners.
// MM2's data path always names the partition, so this only matters for
// records produced without one.
func (t *translator) partitioner() {
	const key = "partitioner.class"
	part := "murmur2_random" // Java's built-in: murmur2 for keys, sticky otherwise
	src := ""
	if v, ok := t.get(key); ok {
		src = key
		switch strings.TrimSpace(v) {
		case "", "org.apache.kafka.clients.producer.internals.DefaultPartitioner":
		case "org.apache.kafka.clients.producer.UniformStickyPartitioner":
			part = "random"
		case "org.apache.kafka.clients.producer.RoundRobinPartitioner":
			part = "random"
			t.warn(key, "librdkafka has no round-robin partitioner; records without a partition are spread at random")
		default:
			t.fail(key, "custom partitioner %q cannot run in librdkafka", strings.TrimSpace(v))
			return
		}
	}
	if b, ok := t.boolean("partitioner.ignore.keys"); ok && b {
		part, src = "random", "partitioner.ignore.keys"
	}
	if src != "" {
		t.emit(src, "partitioner", part)
	} else {
		t.setDefault("partitioner", part)
	}
	for _, k := range []string{"partitioner.adaptive.partitioning.enable", "partitioner.availability.timeout.ms"} {
		if t.has(k) {
			t.drop(k)
		}
	}
}

// interceptors rejects Java interceptors: they may change or drop records, so
// ignoring them would change what is replicated.
func (t *translator) interceptors() {
	const key = "interceptor.classes"
	if v, ok := t.get(key); ok {
		if len(CommaList(v)) > 0 {
			t.fail(key, "Java interceptors cannot run in librdkafka")
		} else {
			t.drop(key)
		}
	}
}

func millis(n int64) time.Duration {
	if n > int64(NoLimit/time.Millisecond) {
		return NoLimit
	}
	return time.Duration(n) * time.Millisecond
}
