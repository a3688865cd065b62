package clientconfig

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// libAliases maps librdkafka's alternative spellings to the one kmirror emits,
// so that one property is never set twice under two names (librdkafka would
// keep whichever confluent-kafka-go happened to set last).
var libAliases = map[string]string{
	"metadata.broker.list":                              "bootstrap.servers",
	"max.in.flight":                                     "max.in.flight.requests.per.connection",
	"sasl.mechanisms":                                   "sasl.mechanism",
	"queue.buffering.max.ms":                            "linger.ms",
	"message.send.max.retries":                          "retries",
	"compression.codec":                                 "compression.type",
	"request.required.acks":                             "acks",
	"delivery.timeout.ms":                               "message.timeout.ms",
	"fetch.message.max.bytes":                           "max.partition.fetch.bytes",
	"auto.commit.enable":                                "enable.auto.commit",
	"sasl.oauthbearer.client.credentials.client.id":     "sasl.oauthbearer.client.id",
	"sasl.oauthbearer.client.credentials.client.secret": "sasl.oauthbearer.client.secret",
}

func canonicalLibName(name string) string {
	if c, ok := libAliases[name]; ok {
		return c
	}
	return name
}

// libReserved are librdkafka properties an operator may not set, with the
// reason. A connector config is anyone's who can reach the REST API, so
// nothing in it may load code into kmirror's process, run a program, or hand
// librdkafka a C pointer; these keys are refused under every client prefix and
// whatever security.protocol says (see reservedAnywhere and the audit in
// docs/security-audit.md, which covers every property of librdkafka 2.11's
// CONFIGURATION.md).
var libReserved = map[string]string{
	"plugin.library.paths": "it loads native plugins, which could change or drop records",
	"interceptors":         "it loads native plugins, which could change or drop records",
	// Loads code: a shared library or an OpenSSL engine/provider.
	"ssl.engine.location": "it loads an OpenSSL engine, a shared library, into kmirror's process",
	"ssl.engine.id":       "it selects an OpenSSL engine, native code that OpenSSL may load into kmirror's process",
	"ssl.providers":       "it loads OpenSSL providers, shared libraries, into kmirror's process",
	// Runs a program. sasl.kerberos.kinit.cmd is also a Java name, so it is
	// refused through commandKeys; the keytab is only a variable of that
	// command.
	"sasl.kerberos.keytab": "it is only read by sasl.kerberos.kinit.cmd, a shell command kmirror never runs (and the bundled librdkafka has no Kerberos)",
	// kmirror's own plumbing.
	"log.queue":                     "kmirror routes librdkafka's logs itself",
	"enabled_events":                "kmirror's Kafka wrapper chooses the events it handles",
	"internal.termination.signal":   "kmirror shuts its clients down itself",
	"offset.store.method":           "MM2 consumers keep no offsets in Kafka or in files",
	"offset.store.path":             "MM2 consumers keep no offsets in Kafka or in files",
	"offset.store.sync.interval.ms": "MM2 consumers keep no offsets in Kafka or in files",
}

// cPointerProperties are the librdkafka properties of type "see dedicated
// API": callbacks and opaque pointers. rd_kafka_conf_set refuses them as
// strings already; naming them here turns "unknown setting" into a message
// that says why.
var cPointerProperties = []string{
	"error_cb", "throttle_cb", "stats_cb", "log_cb", "background_event_cb", "socket_cb", "connect_cb",
	"closesocket_cb", "open_cb", "resolve_cb", "opaque", "default_topic_conf", "ssl_key", "ssl_certificate",
	"ssl_ca", "ssl_engine_callback_data", "ssl.certificate.verify_cb", "oauthbearer_token_refresh_cb",
	"consume_cb", "rebalance_cb", "offset_commit_cb", "dr_cb", "dr_msg_cb", "partitioner_cb", "msg_order_cmp",
}

func init() {
	for _, k := range cPointerProperties {
		libReserved[k] = "it is a C callback or pointer of librdkafka's API, which no config string can carry"
	}
}

// commandKeys are Java client keys that name a program to run. Java's
// sasl.kerberos.kinit.cmd is the kinit binary; librdkafka's property of the
// same name is a whole shell command line that it runs at client creation and
// on every relogin. Kerberos is refused anyway (see noKerberos), but a command
// must never get as far as a client: any non-blank value is an error, under
// any protocol. A blank value asks for nothing and is dropped, as for the
// *.class keys.
var commandKeys = map[string]string{
	"sasl.kerberos.kinit.cmd": "it names a program to run (librdkafka runs it as a shell command); kmirror never runs programs named in a config",
}

// rejectCommands refuses commandKeys whatever security.protocol says; the
// SASL handler has dropped them by then (as Java ignores Kerberos tuning), so
// the drop is undone.
func (t *translator) rejectCommands() {
	for key, reason := range commandKeys {
		if v, ok := t.in[key]; ok && strings.TrimSpace(v) != "" {
			t.cfg.Dropped = slices.DeleteFunc(t.cfg.Dropped, func(d string) bool { return d == key })
			t.fail(key, "cannot be set: %s", reason)
		}
	}
}

// reservedAnywhere reports why a connector key must be refused even when no
// client reads it: a code-loading or command key under a cluster prefix
// (source.cluster.plugin.library.paths), which MM2 would pass to no client,
// is still an operator asking kmirror to load code, and hearing nothing would
// suggest it was done. "" means the key is not one of those.
func reservedAnywhere(connectorKey string) string {
	for _, prefix := range []string{"source.cluster.", "target.cluster."} {
		name, ok := strings.CutPrefix(connectorKey, prefix)
		if !ok {
			continue
		}
		if reason, ok := commandKeys[name]; ok {
			return "cannot be set: " + reason
		}
		if _, java := javaKeyKinds(name); java {
			return ""
		}
		if reason, ok := libReserved[name]; ok {
			return "cannot be set: " + reason
		}
	}
	return ""
}

// passThrough accepts what no Java handler took if it is a librdkafka property
// the client kind accepts (rule 8 of the mapping: operators may tune
// librdkafka-only knobs, e.g. source.consumer.queued.max.messages.kbytes).
// Anything else is an unknown setting.
func (t *translator) passThrough() {
	t.rejectCommands()
	keys := make([]string, 0, len(t.pending))
	for k := range t.pending {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, key := range keys {
		value := t.in[key]
		if _, java := javaKeyKinds(key); java {
			// A Java key of this kind that no rule covers.
			t.fail(key, "not supported by kmirror")
			continue
		}
		if msg := libNameProblem(t.kind, key); msg != "" {
			t.fail(key, "%s", msg)
			continue
		}
		p := libProperties[key]
		if err := p.check(key, value); err != nil {
			t.fail(key, "%v", err)
			continue
		}
		if (isSSLKey(key) && !t.usesSSL()) || (isSASLKey(key) && !t.usesSASL()) {
			// security.protocol does not use it; Java would ignore it too.
			t.drop(key)
			continue
		}
		canon := canonicalLibName(key)
		if src := t.from[canon]; src != "" {
			t.fail(key, "conflicts with %s, which already sets librdkafka's %s", src, canon)
			continue
		}
		if _, forced := t.forced()[canon]; forced {
			t.drop(key)
			t.warn(key, "ignored: MM2 sets %s itself for the %s", canon, t.role)
			continue
		}
		delete(t.pending, key)
		t.out[canon] = value
		t.from[canon] = key
	}
}

// libNameProblem says why a key that is not a Java name is not a librdkafka
// property the client kind may be given, or returns "" if it is one.
func libNameProblem(kind clientKind, key string) string {
	if strings.HasPrefix(key, "go.") {
		return "confluent-kafka-go's go.* settings are chosen by kmirror"
	}
	if reason, ok := libReserved[key]; ok {
		return "cannot be set: " + reason
	}
	p, ok := libProperties[key]
	if !ok {
		return fmt.Sprintf("unknown %s setting: neither a Kafka client config nor a librdkafka property%s",
			kind, suggest(kind, key))
	}
	if !p.acceptedBy(kind) {
		return fmt.Sprintf("librdkafka %s property, not valid for a%s %s", p.role, article(kind), kind)
	}
	return ""
}

// nameProblem checks a key by name only, Java or librdkafka, for a client
// kind; "" means the kind accepts it.
func nameProblem(kind clientKind, key string) string {
	if reason, ok := commandKeys[key]; ok {
		return "cannot be set: " + reason
	}
	if kinds, java := javaKeyKinds(key); java {
		if kinds.has(kind) || key == "client.rack" {
			return ""
		}
		return fmt.Sprintf("not a%s %s setting (Java defines it for %s only)", article(kind), kind, kinds)
	}
	return libNameProblem(kind, key)
}

func article(k clientKind) string {
	if k == kindAdmin {
		return "n"
	}
	return ""
}

func isSSLKey(key string) bool {
	return strings.HasPrefix(key, "ssl.") || key == "enable.ssl.certificate.verification"
}

func isSASLKey(key string) bool {
	return strings.HasPrefix(key, "sasl.") || key == "enable.sasl.oauthbearer.unsecure.jwt"
}

func (r libRole) String() string {
	switch r {
	case libConsumer:
		return "consumer"
	case libProducer:
		return "producer"
	}
	return "client"
}

// acceptedBy reports whether a client kind takes the property without
// librdkafka warning that it does not apply. Admin clients only take
// properties common to all clients.
func (p libProperty) acceptedBy(k clientKind) bool {
	switch p.role {
	case libConsumer:
		return k == kindConsumer
	case libProducer:
		return k == kindProducer
	}
	return true
}

// check validates a value as librdkafka's rd_kafka_conf_set would.
func (p libProperty) check(key, v string) error {
	s := strings.TrimSpace(v)
	switch p.kind {
	case libInt:
		n, err := strconv.ParseInt(s, 0, 64)
		if err != nil {
			if key == "request.required.acks" && strings.EqualFold(s, "all") {
				return nil
			}
			return fmt.Errorf("invalid value %q: not an integer", v)
		}
		if float64(n) < p.min || float64(n) > p.max {
			return fmt.Errorf("value %d is outside librdkafka's range %.0f..%.0f", n, p.min, p.max)
		}
	case libFloat:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("invalid value %q: not a number", v)
		}
		if f < p.min || f > p.max {
			return fmt.Errorf("value %g is outside librdkafka's range %.0f..%.0f", f, p.min, p.max)
		}
	case libBool:
		switch strings.ToLower(s) {
		case "true", "t", "1", "false", "f", "0":
		default:
			return fmt.Errorf("invalid value %q: expected true or false", v)
		}
	case libEnum:
		for _, e := range p.values {
			if strings.EqualFold(s, e) {
				return nil
			}
		}
		return fmt.Errorf("invalid value %q: must be one of %s", v, strings.Join(p.values, ", "))
	}
	return nil
}

// suggest proposes the nearest name a client kind knows for a misspelt key.
func suggest(kind clientKind, key string) string {
	best, bestDist := "", 3 // farther than 2 edits is not a typo
	consider := func(name string) {
		if d := editDistance(key, name); d < bestDist || (d == bestDist && name < best) {
			best, bestDist = name, d
		}
	}
	for name, kinds := range javaKeys {
		if kinds.has(kind) {
			consider(name)
		}
	}
	for name, p := range libProperties {
		if _, java := javaKeys[name]; !java && p.acceptedBy(kind) {
			consider(name)
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + best + "?"
}

// editDistance is the Levenshtein distance between two keys.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
