package clientconfig

import (
	"strings"
)

// securityProtocol reads security.protocol first: it decides whether the ssl.*
// and sasl.* keys are used at all.
func (t *translator) securityProtocol() {
	t.protocol = "plaintext"
	v, ok := t.get("security.protocol")
	if !ok {
		return
	}
	p := strings.ToLower(strings.TrimSpace(v))
	switch p {
	case "plaintext", "ssl", "sasl_plaintext", "sasl_ssl":
		t.protocol = p
		t.emit("security.protocol", "security.protocol", p)
	default:
		t.fail("security.protocol", "invalid value %q: must be one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL", v)
	}
}

// connection translates the CommonClientConfigs keys every client has.
func (t *translator) connection() {
	if v, ok := t.get("bootstrap.servers"); !ok || len(CommaList(v)) == 0 {
		t.fail("bootstrap.servers", "missing: every client needs the brokers to bootstrap from")
	} else {
		t.emit("bootstrap.servers", "bootstrap.servers", strings.Join(CommaList(v), ","))
	}
	if v, ok := t.get("client.id"); ok {
		t.emit("client.id", "client.id", v)
	}
	t.sameNameEnum("client.dns.lookup", "use_all_dns_ips", "resolve_canonical_bootstrap_servers_only")
	if t.kind == kindConsumer {
		if v, ok := t.get("client.rack"); ok && strings.TrimSpace(v) != "" {
			t.emit("client.rack", "client.rack", strings.TrimSpace(v))
		}
	}

	// Socket buffers: Java's -1 means "OS default", librdkafka's 0. Java's own
	// defaults are not injected: a fixed SO_RCVBUF turns off kernel auto-tuning,
	// which a WAN link needs.
	for java, lib := range map[string]string{
		"send.buffer.bytes":    "socket.send.buffer.bytes",
		"receive.buffer.bytes": "socket.receive.buffer.bytes",
	} {
		if n, ok := t.integer(java, -1, javaIntMax); ok {
			if n == -1 {
				n = 0
			}
			t.emit(java, lib, itoa(t.clamp(java, n, 0, 100000000)))
		}
	}

	// Java closes idle connections itself (9 min, admin 5 min); librdkafka by
	// default leaves it to the broker. A negative Java value disables it.
	if n, ok := t.integer("connections.max.idle.ms", -javaLongMax, javaLongMax); ok {
		if n < 0 {
			n = 0
		}
		t.emit("connections.max.idle.ms", "connections.max.idle.ms", itoa(t.clamp("connections.max.idle.ms", n, 0, javaIntMax)))
	} else if t.kind == kindAdmin {
		t.setDefault("connections.max.idle.ms", "300000")
	} else {
		t.setDefault("connections.max.idle.ms", "540000")
	}

	t.reconnectBackoff()

	// Retry backoffs: librdkafka's minimum is 1 ms where Java allows 0.
	for _, key := range []string{"retry.backoff.ms", "retry.backoff.max.ms"} {
		if n, ok := t.integer(key, 0, javaLongMax); ok {
			t.emit(key, key, itoa(t.clamp(key, n, 1, 300000)))
		}
	}

	// Java grows the connection-setup timeout exponentially from .ms up to
	// .max.ms; librdkafka has one fixed timeout, so it gets the ceiling.
	if t.has("socket.connection.setup.timeout.ms") {
		if _, ok := t.integer("socket.connection.setup.timeout.ms", 0, javaLongMax); ok {
			t.drop("socket.connection.setup.timeout.ms")
			t.warn("socket.connection.setup.timeout.ms", "librdkafka has a single fixed connection-setup timeout; socket.connection.setup.timeout.max.ms (default 30000) is used for it")
		}
	}
	if n, ok := t.integer("socket.connection.setup.timeout.max.ms", 0, javaLongMax); ok {
		t.emit("socket.connection.setup.timeout.max.ms", "socket.connection.setup.timeout.ms",
			itoa(t.clamp("socket.connection.setup.timeout.max.ms", n, 1000, javaIntMax)))
	}

	// Same name, other meaning: Java's metadata.max.age.ms is the forced
	// refresh period, which librdkafka calls topic.metadata.refresh.interval.ms;
	// librdkafka's metadata.max.age.ms is a cache lifetime.
	if n, ok := t.integer("metadata.max.age.ms", 0, javaLongMax); ok {
		if n == 0 {
			// librdkafka reads 0 as "never refresh", the opposite of Java's
			// "always stale".
			t.warn("metadata.max.age.ms", "0 raised to 1000: librdkafka would read 0 as no periodic refresh at all")
			n = 1000
		}
		t.emit("metadata.max.age.ms", "topic.metadata.refresh.interval.ms", itoa(t.clamp("metadata.max.age.ms", n, 1, 3600000)))
	}

	// Java's request.timeout.ms bounds every request on the client side, which
	// is librdkafka's socket.timeout.ms; librdkafka's own request.timeout.ms is
	// the producer's broker-side ack timeout, which Java's value also sets.
	if n, ok := t.integer("request.timeout.ms", 0, javaIntMax); ok {
		if t.kind == kindProducer {
			t.emit("request.timeout.ms", "request.timeout.ms", itoa(t.clamp("request.timeout.ms", n, 1, 900000)))
		}
		t.emit("request.timeout.ms", "socket.timeout.ms", itoa(t.clamp("request.timeout.ms", n, 10, 300000)))
	}

	t.sameNameEnum("metadata.recovery.strategy", "none", "rebootstrap")
	if n, ok := t.integer("metadata.recovery.rebootstrap.trigger.ms", 0, javaLongMax); ok {
		t.emit("metadata.recovery.rebootstrap.trigger.ms", "metadata.recovery.rebootstrap.trigger.ms",
			itoa(t.clamp("metadata.recovery.rebootstrap.trigger.ms", n, 0, javaIntMax)))
	}

	if b, ok := t.boolean("enable.metrics.push"); ok {
		t.emit("enable.metrics.push", "enable.metrics.push", boolString(b))
	} else if t.kind == kindAdmin {
		// Java's admin client does not push metrics (KIP-714); librdkafka's
		// default is to push.
		t.setDefault("enable.metrics.push", "false")
	}

	// kmirror exports its own metrics; the JMX reporter settings have no
	// counterpart.
	for key := range t.in {
		switch {
		case key == "metric.reporters", key == "metrics.sample.window.ms", key == "metrics.num.samples",
			key == "metrics.recording.level", key == "auto.include.jmx.reporter",
			strings.HasPrefix(key, "metrics.context."):
			t.drop(key)
		}
	}

	if v, ok := t.get("security.providers"); ok {
		if strings.TrimSpace(v) != "" {
			t.fail("security.providers", "Java security providers (JCA) cannot be loaded into librdkafka, which uses OpenSSL")
		} else {
			t.drop("security.providers")
		}
	}

	// Java always sets SO_KEEPALIVE on its sockets.
	t.setDefault("socket.keepalive.enable", "true")
}

// reconnectBackoff follows CommonClientConfigs.postProcessReconnectBackoffConfigs:
// a reconnect.backoff.ms without a max makes the backoff static. It also keeps
// max >= base, which librdkafka insists on.
func (t *translator) reconnectBackoff() {
	const (
		baseKey = "reconnect.backoff.ms"
		maxKey  = "reconnect.backoff.max.ms"
	)
	base, hasBase := t.integer(baseKey, 0, javaLongMax)
	max, hasMax := t.integer(maxKey, 0, javaLongMax)
	if hasBase {
		base = t.clamp(baseKey, base, 0, 3600000)
	}
	if hasMax {
		max = t.clamp(maxKey, max, 0, 3600000)
	}
	switch {
	case !hasBase && !hasMax:
		// Java's 50 ms / 1 s reconnects faster than librdkafka's 100 ms / 10 s.
		t.setDefault(baseKey, "50")
		t.setDefault(maxKey, "1000")
		return
	case hasBase && !hasMax:
		t.emit(baseKey, baseKey, itoa(base))
		t.emit(baseKey, maxKey, itoa(base))
		return
	case !hasBase:
		base = 50
		t.setDefault(baseKey, "50")
	default:
		t.emit(baseKey, baseKey, itoa(base))
	}
	if max < base {
		t.warn(maxKey, "%d raised to reconnect.backoff.ms (%d): librdkafka refuses a smaller maximum, and Java then uses a static backoff anyway", max, base)
		max = base
	}
	t.emit(maxKey, maxKey, itoa(max))
}

func boolString(b bool) string {
	if b {
		return "true"
	}
	return "false"
}
