package kmtype

import "time"

// PartitionStat is what a source task last reported of one of its partitions.
type PartitionStat struct {
	Topic            string
	Partition        int32
	RemoteTopic      string
	Task             int    // set by the store from the claim
	WorkerID         string // set by the runtime
	ReplicatedOffset int64  // the next source offset to replicate
	EndOffset        *int64 // the source's end offset as last seen; nil when unknown yet
	LagRecords       *int64
	LagSeconds       *float64 // nil only while EndOffset is unknown
	RecordsPerSecond float64
	BytesPerSecond   float64
	LastReplicatedAt *time.Time // source timestamp of the last replicated record
	Status           string     // ok, stall, truncated, … (see the observability docs)
	UpdatedAt        time.Time  // read only
}

// PartitionOwner is a source partition of a connector's plan and the task the plan gives it to.
type PartitionOwner struct {
	Topic     string
	Partition int32
	Task      int
}

// PartitionRate is a partition's byte rate as its task last reported it, for planning moves by load.
type PartitionRate struct {
	Topic          string
	Partition      int32
	Task           int
	BytesPerSecond float64
	Age            time.Duration // how long ago the report was written, by the database's clock
}

// PipelineStat is one task's pipeline over its last measuring interval: the figures capacity advice stands on
// (docs/partitions.md). Stored as JSON, so that a newer worker may add figures an older one ignores.
type PipelineStat struct {
	IntervalSeconds float64 `json:"interval_seconds"`
	// The poll loop's wall time, split: waiting for source records (empty or slow polls), waiting for the
	// target (a full producer queue, no acknowledgement, no lease), and the rest, handling records.
	WaitSourceFraction float64 `json:"wait_source_fraction"`
	WaitTargetFraction float64 `json:"wait_target_fraction"`
	BusyFraction       float64 `json:"busy_fraction"`
	// What librdkafka's statistics said of the replication clients; nil before their first statistics.
	Producer *ClientFigures `json:"producer,omitempty"`
	Consumer *ClientFigures `json:"consumer,omitempty"`
	// The replication producer's settings, as librdkafka runs them.
	BatchSizeBytes    int64   `json:"batch_size_bytes"`
	QueueMaxBytes     int64   `json:"queue_max_bytes"` // queue.buffering.max.kbytes (Java's buffer.memory)
	LingerMs          float64 `json:"linger_ms"`
	CompressionType   string  `json:"compression_type"`
	MaxInFlight       int     `json:"max_in_flight"`
	FetchMaxBytes     int64   `json:"fetch_max_bytes"`
	PartitionMaxBytes int64   `json:"max_partition_fetch_bytes"`
	// The CPU the task's worker process used over the interval, in cores, and the cores it may use.
	WorkerCPUCores float64 `json:"worker_cpu_cores"`
	WorkerCPUs     int     `json:"worker_cpus"`
}

// ClientFigures summarise a librdkafka client's last statistics document.
type ClientFigures struct {
	BatchAvgBytes    float64 `json:"batch_avg_bytes,omitempty"`
	BatchAvgRecords  float64 `json:"batch_avg_records,omitempty"`
	Batches          int64   `json:"batches,omitempty"`
	RTTAvgMs         float64 `json:"rtt_avg_ms"`
	ThrottleAvgMs    float64 `json:"throttle_avg_ms"`
	InFlightRequests int64   `json:"in_flight_requests"`
	InFlightMax      int64   `json:"in_flight_max"`
}

// PartitionEnd is what a STOPPED connector's run has just learned of a source partition.
type PartitionEnd struct {
	Topic     string
	Partition int32
	Next      int64 // the next offset to replicate, from the committed offset; -1 unknown
	End       int64 // the source's end offset; -1 not seen (the topic is gone, or is another incarnation now)
}
