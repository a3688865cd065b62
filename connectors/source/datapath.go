package source

// How a source task moves records (--data-path), and the client settings each data path runs with.

import (
	"fmt"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// DataPath selects how a source task moves records.
type DataPath string

const (
	// DataPathAuto, the default, moves records in C unless the task is exactly-once (its transactions are the
	// Go path's) or its producer's linger.ms is 0: there every batch is sent the moment it has a record, the C
	// path's one batch per partition at a time then waits a round trip per few records, and the Go path was
	// measured faster (docs/benchmarks.md, small batches).
	DataPathAuto DataPath = "auto"
	// DataPathGo moves every record through Go (confluent-kafka-go).
	DataPathGo DataPath = "go"
	// DataPathC moves records inside C (package cpath); Go sees per-batch bookkeeping only. Exactly-once tasks
	// stay on the Go path.
	DataPathC DataPath = "c"
)

// ParseDataPath reads a --data-path value ("" is the default, auto).
func ParseDataPath(s string) (DataPath, error) {
	if d, ok := mirrorconfig.ParseChoice(s, DataPathAuto, DataPathAuto, DataPathGo, DataPathC); ok {
		return d, nil
	}
	return "", fmt.Errorf("data path %q: want auto, c or go", s)
}

// usesCPath tells whether this run replicates on the C path (DataPathAuto's rule).
func (r *sourceRun) usesCPath() bool {
	if r.t.eos {
		return false // exactly-once mode's transactions are the Go engine's
	}
	if r.rule.needed && r.t.cfg.Kmirror.ProvenanceEnabled {
		return false // the rule for headerless records is the Go engine's (headerless.go)
	}
	switch r.t.dataPath {
	case DataPathGo:
		return false
	case DataPathC:
		return true
	}
	return lingerMs(r.producerProps) > 0
}

// lingerMs is the producer's linger.ms (librdkafka's default when unset; a fraction of a millisecond counts).
func lingerMs(props map[string]string) float64 {
	for _, k := range []string{"linger.ms", "queue.buffering.max.ms"} {
		if v, err := strconv.ParseFloat(props[k], 64); err == nil {
			return v
		}
	}
	return libDefaultLingerMs
}

// cpathProps returns librdkafka properties for the C clients: confluent-kafka-go's own go.* keys left out,
// statistics every statsEvery (none when 0), as the Go clients get them (sourceRun.statsEvery).
func cpathProps(props map[string]string, statsEvery time.Duration) map[string]string {
	out := make(map[string]string, len(props)+1)
	for k, v := range props {
		if !strings.HasPrefix(k, "go.") {
			out[k] = v
		}
	}
	out["statistics.interval.ms"] = strconv.FormatInt(statsEvery.Milliseconds(), 10)
	return out
}

// cpathProducerProps are cpathProps for the pipeline's producer. An idempotent one connects to every broker it
// learns of at once (enable.sparse.connections false): librdkafka asks for the producer id
// every 500 ms until one of them is up, and with sparse connections the first such broker came up only on the
// second ask — about a second before the first record could go, against half of that (measured at start-up in
// the server tests: 376–964 ms with sparse connections, 406–489 ms without).
func cpathProducerProps(props map[string]string, statsEvery time.Duration) map[string]string {
	out := cpathProps(props, statsEvery)
	if props["enable.idempotence"] == "true" {
		out["enable.sparse.connections"] = "false"
	}
	return out
}

// cpathAdminProps are the properties of an admin client beside a C pipeline's client: the connection's,
// without the consumer's and producer's own (which a producer-based admin client would warn about).
func cpathAdminProps(props map[string]string) map[string]string {
	out := maps.Clone(props)
	for k := range out {
		switch {
		case strings.HasPrefix(k, "go."), strings.HasPrefix(k, "fetch."), strings.HasPrefix(k, "queued."),
			strings.HasPrefix(k, "queue.buffering."), strings.HasPrefix(k, "enable."), strings.HasPrefix(k, "auto."):
			delete(out, k)
		}
	}
	for _, k := range []string{"group.id", "isolation.level", "max.partition.fetch.bytes", "linger.ms", "batch.size",
		"batch.num.messages", "acks", "request.required.acks", "compression.type", "compression.codec", "message.timeout.ms",
		"max.in.flight", "max.in.flight.requests.per.connection", "retries", "message.send.max.retries", "check.crcs",
		"partition.assignment.strategy", "session.timeout.ms", "heartbeat.interval.ms", "max.poll.interval.ms", "transactional.id"} {
		delete(out, k)
	}
	return out
}
