package source

import (
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/metrics"
)

// DefaultConsumerStatsMaxPartitions is how many partitions a replication consumer may know of and still run with
// librdkafka statistics (Plugin.WithConsumerStatsLimit).
//
// Why a limit: librdkafka 2.11.1 gives a consumer with statistics on a timer for every partition of every topic
// it knows — all partitions of each topic one of its partitions is in, assigned or not — firing every statistics
// interval (10 s at least), and keeps its timers in one sorted list that each firing walks to put the timer
// back at its end. That is partitions² / interval list steps per consumer: nothing at a thousand partitions,
// but at 10,000 partitions over 1,000 topics (eight tasks, round-robin, so every consumer knows all 10,000)
// perf put 47% of kmirror's samples in rd_kafka_timer_schedule_next, kmirror used 1.3 cores, the target
// starved, and the scale run took 117 s to replicate every partition; without consumer statistics 35.5 s,
// 3.6× less CPU and 34 MB less memory per 1,000 partitions (docs/benchmarks.md, Scale). Scaled from that
// profile (0.07 of a core per consumer at 10,000 partitions and a 25 s interval), the timers cost 0.7% of a
// core per consumer at 2,000 known partitions and 3% at 4,000 (where the estimate, knownPartitions, may still
// say 2,000).
//
// What a consumer without statistics loses: its kmirror_client_* series (bytes, broker round trips, throttling,
// errors) and the Java compat kafka_consumer_{incoming,outgoing}_byte_total, and the pipeline view's consumer
// figures. Java's records-lag (kafka_consumer_fetch_manager_records_lag, the Strimzi dashboard's Consumer Lag)
// is then exported from kmirror's own per-partition sample instead; kmirror's native lag series never came from
// librdkafka's statistics.
const DefaultConsumerStatsMaxPartitions = 2000

// DefaultProducerStatsMaxPartitions is how many partitions a replication producer may know of and still run with
// librdkafka statistics (Plugin.WithProducerStatsLimit).
//
// Why a limit: a producer's statistics document has an entry for every partition of every topic it knows, which
// kmirror's metrics drop at once (they read the client and its brokers only). librdkafka builds the document
// under the client's lock in a buffer it keeps doubling, and kmirror copies it into Go and parses it. At 10,000
// partitions over 1,000 topics (eight tasks, round-robin, every producer knowing all 10,000, statistics every
// 25 s), a side-by-side scale run of the same build with and without producer statistics replicated every
// partition in 85.3 s against 50.0 s, with 96.2 against 61.7 CPU s and 1,106 against 704 MB peak RSS
// (docs/benchmarks.md, Scale). Below the limit a document is at most a fifth of that one, and the interval
// grows with the task's partitions (clientStatsEvery).
//
// What a producer without statistics loses: its kmirror_client_* series (bytes, broker round trips, throttling,
// errors), the Java compat kafka_producer_{incoming,outgoing}_byte_total and kafka_producer_buffer_available_bytes,
// and the pipeline view's producer figures. Replication latency and every per-partition series are kmirror's own
// and stay.
const DefaultProducerStatsMaxPartitions = 2000

// knownPartitions estimates how many partitions the consumer (or producer) of tps will know: per topic, its
// highest partition in tps plus one. The task is not told the topics' partition counts, so this is a lower
// bound; with partitions dealt round-robin it is at least half the truth (0.6 of it at ten partitions per topic
// and eight tasks), so the limit holds within a factor of two.
func knownPartitions(tps []mirror.TopicPartition) int {
	highest := map[string]int32{}
	for _, tp := range tps {
		if n, ok := highest[tp.Topic]; !ok || tp.Partition > n {
			highest[tp.Topic] = tp.Partition
		}
	}
	known := 0
	for _, n := range highest {
		known += int(n) + 1
	}
	return known
}

// statsOff tells whether a replication client of tps runs without librdkafka statistics under the limit max (at
// most 0: none). The producer knows the remote topics of the same partitions, so one estimate serves both.
func statsOff(tps []mirror.TopicPartition, max int) bool {
	return max > 0 && knownPartitions(tps) > max
}

// noteConsumerStatsOff sets the run up for a consumer without statistics: it says so once, and the partitions'
// samples feed Java's records-lag of the consumer (sampleStats) instead of librdkafka's documents.
func (r *sourceRun) noteConsumerStatsOff(known int) {
	r.log.Info("the replication consumer runs without librdkafka statistics: it knows of more partitions than the limit, "+
		"and librdkafka's per-partition statistics timers would cost CPU in the square of that; its client series are absent and "+
		"kafka_consumer_fetch_manager_records_lag comes from kmirror's own sample",
		"known_partitions_at_least", known, "limit", r.t.consumerStatsMax)
	if r.t.metrics == nil {
		return
	}
	l := r.t.clientLabels(clientconfig.ReplicationConsumer, r.consumerProps)
	reg := r.t.metrics
	r.consumerLags = func(lags []metrics.PartitionLag) { reg.ConsumerLags(l, lags) }
	r.removeConsumerLags = func() { reg.RemoveClient(l) }
}

// noteProducerStatsOff says once that the run's producer has no statistics; nothing takes their place.
func (r *sourceRun) noteProducerStatsOff(known int) {
	r.log.Info("the replication producer runs without librdkafka statistics: it knows of more partitions than the limit, "+
		"and each statistics document would carry all of them; its client series are absent",
		"known_partitions_at_least", known, "limit", r.t.producerStatsMax)
}
