package clientconfig

import (
	"strings"
)

// Java's consumer defaults that the translation reasons with.
const (
	javaSessionTimeoutMs = 45000
	libMaxPollIntervalMs = 300000
	libConsumerMaxMsg    = 1000000
)

// consumer translates the ConsumerConfig keys. Every consumer kmirror builds is
// one of MM2's: it is assigned partitions, never subscribes and never commits.
func (t *translator) consumer() {
	if v, ok := t.get("group.id"); ok && strings.TrimSpace(v) != "" {
		t.emit("group.id", "group.id", v)
	}
	if v, ok := t.get("group.instance.id"); ok && strings.TrimSpace(v) != "" {
		t.emit("group.instance.id", "group.instance.id", v)
	}

	classic := true
	if v, ok := t.get("group.protocol"); ok {
		switch p := strings.ToLower(strings.TrimSpace(v)); p {
		case "classic", "consumer":
			classic = p == "classic"
			t.emit("group.protocol", "group.protocol", p)
		default:
			t.fail("group.protocol", "invalid value %q: must be classic or consumer", v)
		}
	}
	if v, ok := t.get("group.remote.assignor"); ok && strings.TrimSpace(v) != "" {
		t.emit("group.remote.assignor", "group.remote.assignor", strings.TrimSpace(v))
	}

	// With group.protocol=consumer these are the broker's business and
	// librdkafka refuses them; Java ignores them there.
	session := int64(javaSessionTimeoutMs)
	for _, key := range []string{"session.timeout.ms", "heartbeat.interval.ms"} {
		n, ok := t.integer(key, -javaIntMax-1, javaIntMax)
		switch {
		case !ok:
		case !classic:
			t.drop(key)
		default:
			n = t.clamp(key, n, 1, 3600000)
			if key == "session.timeout.ms" {
				session = n
			}
			t.emit(key, key, itoa(n))
		}
	}
	t.assignmentStrategy(classic)
	if n, ok := t.integer("max.poll.interval.ms", 1, javaIntMax); ok {
		n = t.clamp("max.poll.interval.ms", n, 1, 86400000)
		if classic && n < session {
			t.warn("max.poll.interval.ms", "%d raised to session.timeout.ms (%d), as librdkafka requires", n, session)
			n = session
		}
		t.emit("max.poll.interval.ms", "max.poll.interval.ms", itoa(n))
	} else if classic && session > libMaxPollIntervalMs {
		t.setDefault("max.poll.interval.ms", itoa(session))
	}

	// MM2 forces auto-commit off (applyForced); the interval has no effect.
	if b, ok := t.boolean("enable.auto.commit"); ok {
		t.cfg.Dropped = append(t.cfg.Dropped, "enable.auto.commit")
		if b {
			t.warn("enable.auto.commit", "ignored: MM2 consumers never commit offsets")
		}
	}
	if _, ok := t.integer("auto.commit.interval.ms", 0, javaIntMax); ok {
		t.drop("auto.commit.interval.ms")
	}
	t.autoOffsetReset()

	if n, ok := t.integer("fetch.min.bytes", 0, javaIntMax); ok {
		t.emit("fetch.min.bytes", "fetch.min.bytes", itoa(t.clamp("fetch.min.bytes", n, 1, 100000000)))
	}
	if n, ok := t.integer("fetch.max.bytes", 0, javaIntMax); ok {
		n = t.clamp("fetch.max.bytes", n, 1000, 2147483135)
		t.emit("fetch.max.bytes", "fetch.max.bytes", itoa(n))
		// librdkafka refuses an explicit fetch.max.bytes below the consumer's
		// message.max.bytes (default 1000000).
		if n < libConsumerMaxMsg {
			t.setDefault("message.max.bytes", itoa(n))
		}
	}
	if n, ok := t.integer("fetch.max.wait.ms", 0, javaIntMax); ok {
		t.emit("fetch.max.wait.ms", "fetch.wait.max.ms", itoa(t.clamp("fetch.max.wait.ms", n, 0, 300000)))
	}
	if n, ok := t.integer("max.partition.fetch.bytes", 0, javaIntMax); ok {
		t.emit("max.partition.fetch.bytes", "max.partition.fetch.bytes", itoa(t.clamp("max.partition.fetch.bytes", n, 1, 1000000000)))
	}
	if n, ok := t.integer("max.poll.records", 1, javaIntMax); ok {
		t.cfg.MaxPollRecords = int(n)
	}
	if b, ok := t.boolean("check.crcs"); ok {
		t.emit("check.crcs", "check.crcs", boolString(b))
	}
	if !t.sameNameEnum("isolation.level", "read_uncommitted", "read_committed") && t.role == ReplicationConsumer {
		// A deliberate difference from MM2, whose Java consumer reads
		// uncommitted: records of aborted source transactions were never
		// visible to a read_committed consumer of the source, and copied as
		// plain records they would be visible to every consumer of the target.
		t.setDefault("isolation.level", "read_committed")
	} else {
		// Java reads uncommitted by default, librdkafka committed: MM2's other
		// consumers read its own internal topics as Java does.
		t.setDefault("isolation.level", "read_uncommitted")
	}
	if b, ok := t.boolean("allow.auto.create.topics"); ok {
		t.emit("allow.auto.create.topics", "allow.auto.create.topics", boolString(b))
	}
	if n, ok := t.integer("default.api.timeout.ms", 0, javaIntMax); ok {
		t.cfg.DefaultAPITimeout = millis(n)
	}
	for _, key := range []string{"exclude.internal.topics", "key.deserializer", "value.deserializer",
		"internal.leave.group.on.close", "internal.throw.on.fetch.stable.offset.unsupported",
		"share.acknowledgement.mode"} {
		if t.has(key) {
			t.drop(key)
		}
	}
	t.interceptors()
}

// autoOffsetReset maps Java's strategies to librdkafka's; MM2 starts from the
// earliest offset when none is stored and the user said nothing.
func (t *translator) autoOffsetReset() {
	const key = "auto.offset.reset"
	v, ok := t.get(key)
	if !ok {
		t.setDefault(key, "earliest")
		return
	}
	switch s := strings.ToLower(strings.TrimSpace(v)); {
	case s == "earliest", s == "latest":
		t.emit(key, key, s)
	case s == "none":
		// librdkafka then reports ERR__AUTO_OFFSET_RESET per partition where
		// Java throws NoOffsetForPartitionException.
		t.emit(key, key, "error")
	case strings.HasPrefix(s, "by_duration:"):
		t.fail(key, "by_duration reset is not supported; use earliest or latest")
	default:
		t.fail(key, "invalid value %q: must be earliest, latest or none", v)
	}
}

// assignmentStrategy maps assignor classes to librdkafka names. librdkafka
// cannot mix eager and cooperative assignors, so Java's default list
// [RangeAssignor, CooperativeStickyAssignor] keeps only the strategies of the
// protocol of the first entry, which is what Java uses first.
func (t *translator) assignmentStrategy(classic bool) {
	const key = "partition.assignment.strategy"
	v, ok := t.get(key)
	if !ok {
		return
	}
	if !classic {
		t.cfg.Dropped = append(t.cfg.Dropped, key)
		return
	}
	var names []string
	cooperative := false
	for i, class := range CommaList(v) {
		simple := class[strings.LastIndex(class, ".")+1:]
		var name string
		switch simple {
		case "RangeAssignor":
			name = "range"
		case "RoundRobinAssignor":
			name = "roundrobin"
		case "CooperativeStickyAssignor":
			name = "cooperative-sticky"
		case "StickyAssignor":
			t.fail(key, "the eager StickyAssignor has no librdkafka equivalent; use CooperativeStickyAssignor")
			return
		default:
			t.fail(key, "custom assignor %q cannot run in librdkafka", class)
			return
		}
		coop := name == "cooperative-sticky"
		if i == 0 {
			cooperative = coop
		}
		if coop != cooperative {
			t.warn(key, "%s dropped: librdkafka cannot mix eager and cooperative assignors", class)
			continue
		}
		names = append(names, name)
	}
	if len(names) > 0 {
		t.emit(key, key, strings.Join(names, ","))
	}
}
