package metrics

import (
	"math"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

const mm2SourcePrefix = "kafka_connect_mirror_mirrorsourceconnector_"

var (
	compatPartitionLabels = []string{"source", "target", "topic", "partition"}
	nativePartitionLabels = []string{"connector", "source", "target", "topic", "partition"}

	descRecordCount        = compatGauge("record_count", "MM2 record-count: records the target acknowledged (cumulative).")
	descRecordRate         = compatGauge("record_rate", "MM2 record-rate: records the target acknowledged per second (2 x 30 s window).")
	descByteCount          = compatGauge("byte_count", "MM2 byte-count: value bytes of fetched records (cumulative).")
	descByteRate           = compatGauge("byte_rate", "MM2 byte-rate: value bytes of fetched records per second (2 x 30 s window).")
	descRecordAge          = compatGauge("record_age_ms", "MM2 record-age-ms: fetch time - record timestamp of the last fetched record.")
	descRecordAgeMin       = compatGauge("record_age_ms_min", "MM2 record-age-ms-min over the 2 x 30 s window (NaN when empty).")
	descRecordAgeMax       = compatGauge("record_age_ms_max", "MM2 record-age-ms-max over the 2 x 30 s window (NaN when empty).")
	descRecordAgeAvg       = compatGauge("record_age_ms_avg", "MM2 record-age-ms-avg over the 2 x 30 s window (NaN when empty).")
	descReplLatency        = compatGauge("replication_latency_ms", "MM2 replication-latency-ms: acknowledgement time - record timestamp of the last acknowledged record.")
	descReplLatencyMin     = compatGauge("replication_latency_ms_min", "MM2 replication-latency-ms-min over the 2 x 30 s window (NaN when empty).")
	descReplLatencyMax     = compatGauge("replication_latency_ms_max", "MM2 replication-latency-ms-max over the 2 x 30 s window (NaN when empty).")
	descReplLatencyAvg     = compatGauge("replication_latency_ms_avg", "MM2 replication-latency-ms-avg over the 2 x 30 s window (NaN when empty).")
	descReplicatedRecords  = nativeDesc("kmirror_replicated_records_total", "Records the target acknowledged.")
	descReplicatedBytes    = nativeDesc("kmirror_replicated_bytes_total", "Bytes (key + value + headers) of records the target acknowledged.")
	descSkippedRecords     = nativeDesc("kmirror_provenance_skipped_records_total", "Records not copied because their provenance header names the target cluster (the cycle guard).")
	descSourceEndOffset    = nativeDesc("kmirror_source_end_offset", "The source partition's end offset (high watermark, or last stable offset when reading committed).")
	descReplicatedOffset   = nativeDesc("kmirror_replicated_offset", "The next source offset to replicate.")
	descLagRecords         = nativeDesc("kmirror_replication_lag_records", "Source end offset - next offset to replicate (an offset distance: an upper bound on records).")
	descLagSeconds         = nativeDesc("kmirror_replication_lag_seconds", "How stale the target is: 0 when caught up, else now - timestamp of the next record to replicate.")
	descLastReplicatedTS   = nativeDesc("kmirror_last_replicated_timestamp_seconds", "Source timestamp of the last record the target acknowledged.")
	descPartitionStatus    = prometheus.NewDesc("kmirror_partition_status", "The partition's replication status (state-set: ok, warn, stall, stop, rewind, truncated, paused).", append(slices.Clone(nativePartitionLabels), "status"), nil)
	descTopicMappingInfo   = prometheus.NewDesc("kmirror_topic_mapping_info", "Source topic to remote topic of a replicated topic.", []string{"source", "target", "topic", "remote_topic"}, nil)
	partitionCollectorDesc = []*prometheus.Desc{
		descRecordCount, descRecordRate, descByteCount, descByteRate,
		descRecordAge, descRecordAgeMin, descRecordAgeMax, descRecordAgeAvg,
		descReplLatency, descReplLatencyMin, descReplLatencyMax, descReplLatencyAvg,
		descReplicatedRecords, descReplicatedBytes, descSkippedRecords, descSourceEndOffset, descReplicatedOffset,
		descLagRecords, descLagSeconds, descLastReplicatedTS, descPartitionStatus, descTopicMappingInfo,
	}
)

func compatGauge(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(mm2SourcePrefix+name, help, compatPartitionLabels, nil)
}

func nativeDesc(name, help string) *prometheus.Desc {
	return prometheus.NewDesc(name, help, nativePartitionLabels, nil)
}

// partitionCollector emits the per-partition series from the SourcePartitions' state at scrape time.
type partitionCollector struct{ r *Registry }

func (c partitionCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, partitionCollectorDesc...)
}

func (c partitionCollector) Collect(ch chan<- prometheus.Metric) {
	// Two live partitions may share exported labels: the runs of two task generations during a hand-over
	// (native labels have no task), or two connectors mirroring the same topic between the same aliases
	// (compat labels have no connector). The newest one is exported.
	parts := newestFirst(&c.r.mu, c.r.partitions, func(p *SourcePartition) uint64 { return p.seq })
	compatSeen := make(map[[4]string]bool, len(parts))
	nativeSeen := make(map[[5]string]bool, len(parts))
	mappingSeen := make(map[[4]string]bool)
	gauge := func(d *prometheus.Desc, v float64, lv []string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	nowMs := time.Now().UnixMilli()
	for _, p := range parts {
		fetch, ack := p.fetch.measure(nowMs), p.ack.measure(nowMs)
		if k := [4]string(p.compat); !compatSeen[k] {
			compatSeen[k] = true
			emitGauges(ch, p.compat, []gaugeValue{
				{descRecordCount, ack.total}, {descRecordRate, ack.rate}, {descByteCount, fetch.total}, {descByteRate, fetch.rate},
				{descRecordAge, fetch.last}, {descRecordAgeMin, fetch.min}, {descRecordAgeMax, fetch.max}, {descRecordAgeAvg, fetch.avg},
				{descReplLatency, ack.last}, {descReplLatencyMin, ack.min}, {descReplLatencyMax, ack.max}, {descReplLatencyAvg, ack.avg},
			})
		}
		if k := [4]string{p.topic.source, p.topic.target, p.topic.topic, p.remoteTopic}; !mappingSeen[k] {
			mappingSeen[k] = true
			gauge(descTopicMappingInfo, 1, k[:])
		}
		if k := [5]string(p.native); nativeSeen[k] {
			continue
		} else {
			nativeSeen[k] = true
		}
		lv := p.native
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(descReplicatedRecords, prometheus.CounterValue, ack.total, p.created, lv...)
		ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(descReplicatedBytes, prometheus.CounterValue, float64(ack.bytes), p.created, lv...)
		if n := p.skipped.Load(); n > 0 { // only where the guard acts: one-way replication keeps its series count
			ch <- prometheus.MustNewConstMetricWithCreatedTimestamp(descSkippedRecords, prometheus.CounterValue, float64(n), p.created, lv...)
		}
		if ack.lastTS != 0 {
			gauge(descLastReplicatedTS, float64(ack.lastTS)/1000, lv)
		}
		p.posMu.Lock()
		pos := p.pos
		p.posMu.Unlock()
		if pos.set {
			if pos.replicated >= 0 {
				gauge(descReplicatedOffset, float64(pos.replicated), lv)
			}
			if pos.end >= 0 {
				gauge(descSourceEndOffset, float64(pos.end), lv)
				if pos.replicated >= 0 {
					gauge(descLagRecords, float64(max(0, pos.end-pos.replicated)), lv)
				}
			}
			if !math.IsNaN(pos.lagSeconds) {
				gauge(descLagSeconds, pos.lagSeconds, lv)
			}
		}
		if st := p.status.Load(); st > 0 {
			for i, name := range partitionStatuses {
				v := 0.0
				if int32(i+1) == st {
					v = 1
				}
				ch <- prometheus.MustNewConstMetric(descPartitionStatus, prometheus.GaugeValue, v, append(lv[:len(lv):len(lv)], name)...)
			}
		}
	}
}
