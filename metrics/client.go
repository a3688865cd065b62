package metrics

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
)

// ClientLabels name one librdkafka client of a task. Role is MM2's client role: replication-consumer,
// replication-producer, offset-syncs-producer, checkpoints-producer, heartbeats-producer, ... ClientID is the
// client's client.id; the compat series carry it, jmx-sanitized, as clientid, so the Strimzi board finds a
// task's consumer by `clientid=~".*replication-consumer\""` and a source task's producer by
// `clientid=~"\".*SourceConnector-[0-9]+\""` when the ids are MM2's.
type ClientLabels struct {
	Connector      string
	Task           int
	Role, ClientID string
}

// clientSnapshot is what the last statistics document of a client said, ready to export.
type clientSnapshot struct {
	seq      uint64
	consumer bool
	lagsOnly bool // no statistics document: only the compat records-lag (ConsumerLags)
	stats    rdStats
	clientID string   // jmx-sanitized
	native   []string // connector, task, role, client
	lags     []fetchLag
}

type fetchLag struct {
	topic, partition string
	lag              float64
}

// The parts of librdkafka's statistics document (STATISTICS.md) that are exported.
type rdStats struct {
	Type       string              `json:"type"`
	MsgCnt     int64               `json:"msg_cnt"`
	MsgSize    int64               `json:"msg_size"`
	MsgMax     int64               `json:"msg_max"`
	MsgSizeMax int64               `json:"msg_size_max"`
	TxBytes    int64               `json:"tx_bytes"`
	RxBytes    int64               `json:"rx_bytes"`
	Brokers    map[string]rdBroker `json:"brokers"`
	Topics     map[string]rdTopic  `json:"topics"`
}

type rdBroker struct {
	NodeID      int32    `json:"nodeid"`
	Source      string   `json:"source"` // learned, configured, internal, logical
	TxErrs      int64    `json:"txerrs"`
	RxErrs      int64    `json:"rxerrs"`
	ReqTimeouts int64    `json:"req_timeouts"`
	WaitResp    int64    `json:"waitresp_cnt"` // requests sent, awaiting their response
	RTT         rdWindow `json:"rtt"`          // microseconds
	Throttle    rdWindow `json:"throttle"`     // milliseconds
}

type rdWindow struct {
	Avg int64 `json:"avg"`
	Max int64 `json:"max"`
	P99 int64 `json:"p99"`
	Cnt int64 `json:"cnt"`
}

type rdTopic struct {
	BatchSize  rdWindow               `json:"batchsize"` // producer: bytes per batch
	BatchCnt   rdWindow               `json:"batchcnt"`  // producer: messages per batch
	Partitions map[string]rdPartition `json:"partitions"`
}

type rdPartition struct {
	Partition int32 `json:"partition"`
	Desired   bool  `json:"desired"`
	HiOffset  int64 `json:"hi_offset"`
	AppOffset int64 `json:"app_offset"`
}

// ClientStats records a librdkafka statistics document (statistics.interval.ms) of a client; the client's
// series show the last one until RemoveClient. A document that does not parse is ignored (the previous one
// stays).
func (r *Registry) ClientStats(c ClientLabels, statsJSON string) {
	d, err := ParseClientStats(statsJSON)
	if err != nil {
		return
	}
	r.ClientDoc(c, d)
}

// ClientDoc is ClientStats for a document already parsed; it does not change d.
func (r *Registry) ClientDoc(c ClientLabels, d *ClientDoc) {
	st := d.st // the maps stay d's: the snapshot gets its own below
	snap := &clientSnapshot{consumer: st.Type == "consumer", clientID: jmxSanitize(validLabel(c.ClientID)),
		native: []string{validLabel(c.Connector), strconv.Itoa(c.Task), validLabel(c.Role), validLabel(c.ClientID)}}
	if snap.consumer {
		// Java's records-lag: the partition's high watermark - the consumer's position, for assigned
		// partitions. librdkafka's own consumer_lag counts from committed offsets, which kmirror never commits
		// to the source.
		var lags []PartitionLag
		for name, t := range st.Topics {
			for _, p := range t.Partitions {
				if p.Desired && p.HiOffset >= 0 && p.AppOffset >= 0 {
					lags = append(lags, PartitionLag{Topic: name, Partition: p.Partition, Lag: max(0, p.HiOffset-p.AppOffset)})
				}
			}
		}
		snap.lags = compatLags(lags)
	}
	st.Topics = nil
	brokers := make(map[string]rdBroker, len(st.Brokers))
	for name, b := range st.Brokers {
		// A configured broker is named after bootstrap.servers as written, which may have come from a config
		// provider and must not become a label; the brokers the cluster names (learned) carry the traffic.
		if b.Source != "internal" && b.Source != "logical" && b.Source != "configured" {
			brokers[name] = b
		}
	}
	st.Brokers = brokers
	snap.stats = st
	r.putClient(c, snap)
}

// putClient makes snap the client's snapshot, keeping its age among the clients (the newest of two with one
// client.id exports the compat series).
func (r *Registry) putClient(c ClientLabels, snap *clientSnapshot) {
	r.clMu.Lock()
	defer r.clMu.Unlock()
	if old, ok := r.clients[c]; ok {
		snap.seq = old.seq
	} else {
		r.clSeq++
		snap.seq = r.clSeq
	}
	r.clients[c] = snap
}

// PartitionLag is a partition's records-lag: its high watermark less the consumer's position.
type PartitionLag struct {
	Topic     string
	Partition int32
	Lag       int64
}

// ConsumerLags sets Java's records-lag of a consumer that runs without librdkafka statistics, from its
// application's own figures; the client's other series are absent (not zero) until a document comes
// (ClientDoc) or RemoveClient.
func (r *Registry) ConsumerLags(c ClientLabels, lags []PartitionLag) {
	r.putClient(c, &clientSnapshot{consumer: true, lagsOnly: true, clientID: jmxSanitize(validLabel(c.ClientID)),
		lags: compatLags(lags)})
}

// compatLags turns partitions' lags into records-lag samples, leaving out unknown ones (a negative partition
// or lag). Topics "a.b" and "a_b" share a tag; the first seen is kept, as a JMX registration would be.
func compatLags(lags []PartitionLag) []fetchLag {
	out := make([]fetchLag, 0, len(lags))
	seen := make(map[fetchLag]bool, len(lags))
	for _, l := range lags {
		if l.Partition < 0 || l.Lag < 0 {
			continue
		}
		k := fetchLag{topic: fetchTopic(l.Topic), partition: strconv.Itoa(int(l.Partition))}
		if seen[k] {
			continue
		}
		seen[k] = true
		k.lag = float64(l.Lag)
		out = append(out, k)
	}
	return out
}

// RemoveClient deletes every series of the client.
func (r *Registry) RemoveClient(c ClientLabels) {
	r.clMu.Lock()
	defer r.clMu.Unlock()
	delete(r.clients, c)
}

var (
	nativeClientLabels = []string{"connector", "task", "role", "client"}
	brokerClientLabels = []string{"connector", "task", "role", "client", "broker"}
	compatClientLabels = []string{"clientid"}

	descClientQueueMessages    = prometheus.NewDesc("kmirror_client_queue_messages", "Messages in the client's producer queues (librdkafka msg_cnt).", nativeClientLabels, nil)
	descClientQueueBytes       = prometheus.NewDesc("kmirror_client_queue_bytes", "Bytes of messages in the client's producer queues (librdkafka msg_size).", nativeClientLabels, nil)
	descClientQueueMaxMessages = prometheus.NewDesc("kmirror_client_queue_max_messages", "Limit of messages in the producer queues (librdkafka msg_max).", nativeClientLabels, nil)
	descClientQueueMaxBytes    = prometheus.NewDesc("kmirror_client_queue_max_bytes", "Limit of bytes in the producer queues (librdkafka msg_size_max).", nativeClientLabels, nil)
	descClientTxBytes          = prometheus.NewDesc("kmirror_client_transmitted_bytes_total", "Bytes the client sent to brokers (librdkafka tx_bytes).", nativeClientLabels, nil)
	descClientRxBytes          = prometheus.NewDesc("kmirror_client_received_bytes_total", "Bytes the client received from brokers (librdkafka rx_bytes).", nativeClientLabels, nil)
	descBrokerRTTAvg           = prometheus.NewDesc("kmirror_client_broker_rtt_avg_seconds", "Average broker round-trip time over the last statistics interval.", brokerClientLabels, nil)
	descBrokerRTTP99           = prometheus.NewDesc("kmirror_client_broker_rtt_p99_seconds", "99th percentile of the broker round-trip time over the last statistics interval.", brokerClientLabels, nil)
	descBrokerThrottleAvg      = prometheus.NewDesc("kmirror_client_broker_throttle_avg_seconds", "Average broker throttle time over the last statistics interval.", brokerClientLabels, nil)
	descBrokerThrottleMax      = prometheus.NewDesc("kmirror_client_broker_throttle_max_seconds", "Longest broker throttle time over the last statistics interval.", brokerClientLabels, nil)
	descBrokerTxErrors         = prometheus.NewDesc("kmirror_client_broker_tx_errors_total", "Transmission errors towards the broker (librdkafka txerrs).", brokerClientLabels, nil)
	descBrokerRxErrors         = prometheus.NewDesc("kmirror_client_broker_rx_errors_total", "Receive errors from the broker (librdkafka rxerrs).", brokerClientLabels, nil)
	descBrokerReqTimeouts      = prometheus.NewDesc("kmirror_client_broker_request_timeouts_total", "Requests to the broker that timed out (librdkafka req_timeouts).", brokerClientLabels, nil)

	descConsumerRecordsLag    = prometheus.NewDesc("kafka_consumer_fetch_manager_records_lag", "Java consumer records-lag: partition high watermark - consumer position.", []string{"clientid", "topic", "partition"}, nil)
	descConsumerIncomingBytes = prometheus.NewDesc("kafka_consumer_incoming_byte_total", "Java consumer incoming-byte-total: bytes received from brokers.", compatClientLabels, nil)
	descConsumerOutgoingBytes = prometheus.NewDesc("kafka_consumer_outgoing_byte_total", "Java consumer outgoing-byte-total: bytes sent to brokers.", compatClientLabels, nil)
	descProducerIncomingBytes = prometheus.NewDesc("kafka_producer_incoming_byte_total", "Java producer incoming-byte-total: bytes received from brokers.", compatClientLabels, nil)
	descProducerOutgoingBytes = prometheus.NewDesc("kafka_producer_outgoing_byte_total", "Java producer outgoing-byte-total: bytes sent to brokers.", compatClientLabels, nil)
	descProducerBufferAvail   = prometheus.NewDesc("kafka_producer_buffer_available_bytes", "Java producer buffer-available-bytes: producer queue bytes limit - bytes queued.", compatClientLabels, nil)

	clientCollectorDesc = []*prometheus.Desc{
		descClientQueueMessages, descClientQueueBytes, descClientQueueMaxMessages, descClientQueueMaxBytes,
		descClientTxBytes, descClientRxBytes, descBrokerRTTAvg, descBrokerRTTP99, descBrokerThrottleAvg,
		descBrokerThrottleMax, descBrokerTxErrors, descBrokerRxErrors, descBrokerReqTimeouts,
		descConsumerRecordsLag, descConsumerIncomingBytes, descConsumerOutgoingBytes,
		descProducerIncomingBytes, descProducerOutgoingBytes, descProducerBufferAvail,
	}
)

type clientCollector struct{ r *Registry }

func (c clientCollector) Describe(ch chan<- *prometheus.Desc) {
	describe(ch, clientCollectorDesc...)
}

func (c clientCollector) Collect(ch chan<- prometheus.Metric) {
	// Two clients with one client.id would export the same compat series: the newest wins.
	clients := newestFirst(&c.r.clMu, c.r.clients, func(s *clientSnapshot) uint64 { return s.seq })
	compatSeen := make(map[string]bool, len(clients))
	emit := func(d *prometheus.Desc, t prometheus.ValueType, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, t, v, lv...)
	}
	const gauge, counter = prometheus.GaugeValue, prometheus.CounterValue
	for _, snap := range clients {
		st, lv := &snap.stats, snap.native
		if snap.lagsOnly {
			if !compatSeen[snap.clientID] {
				compatSeen[snap.clientID] = true
				for _, lag := range snap.lags {
					emit(descConsumerRecordsLag, gauge, lag.lag, snap.clientID, lag.topic, lag.partition)
				}
			}
			continue
		}
		if !snap.consumer {
			emit(descClientQueueMessages, gauge, float64(st.MsgCnt), lv...)
			emit(descClientQueueBytes, gauge, float64(st.MsgSize), lv...)
			emit(descClientQueueMaxMessages, gauge, float64(st.MsgMax), lv...)
			emit(descClientQueueMaxBytes, gauge, float64(st.MsgSizeMax), lv...)
		}
		emit(descClientTxBytes, counter, float64(st.TxBytes), lv...)
		emit(descClientRxBytes, counter, float64(st.RxBytes), lv...)
		for name, b := range st.Brokers {
			blv := append(lv[:len(lv):len(lv)], name)
			if b.RTT.Cnt > 0 {
				emit(descBrokerRTTAvg, gauge, float64(b.RTT.Avg)/1e6, blv...)
				emit(descBrokerRTTP99, gauge, float64(b.RTT.P99)/1e6, blv...)
			}
			if b.Throttle.Cnt > 0 {
				emit(descBrokerThrottleAvg, gauge, float64(b.Throttle.Avg)/1e3, blv...)
				emit(descBrokerThrottleMax, gauge, float64(b.Throttle.Max)/1e3, blv...)
			}
			emit(descBrokerTxErrors, counter, float64(b.TxErrs), blv...)
			emit(descBrokerRxErrors, counter, float64(b.RxErrs), blv...)
			emit(descBrokerReqTimeouts, counter, float64(b.ReqTimeouts), blv...)
		}

		id := snap.clientID
		if compatSeen[id] {
			continue
		}
		compatSeen[id] = true
		if snap.consumer {
			emit(descConsumerIncomingBytes, counter, float64(st.RxBytes), id)
			emit(descConsumerOutgoingBytes, counter, float64(st.TxBytes), id)
			for _, lag := range snap.lags {
				emit(descConsumerRecordsLag, gauge, lag.lag, id, lag.topic, lag.partition)
			}
		} else {
			emit(descProducerIncomingBytes, counter, float64(st.RxBytes), id)
			emit(descProducerOutgoingBytes, counter, float64(st.TxBytes), id)
			emit(descProducerBufferAvail, gauge, float64(max(0, st.MsgSizeMax-st.MsgSize)), id)
		}
	}
}
