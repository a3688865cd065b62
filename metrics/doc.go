// Package metrics is kmirror's Prometheus instrumentation and its GET /metrics. The server creates one
// Registry per process (New) and hands it to whoever reports: the connectors record per-partition, checkpoint
// and client facts into it, the task runtime reports unit states through it (it implements tasks.Observer),
// the server wraps the REST API with HTTPMiddleware and serves Handler. Nothing registers globally: no
// prometheus.DefaultRegisterer, no promauto. Each worker lists only its own series; Prometheus scrapes every
// worker and sums.
//
// Only this package and its users import client_golang.
//
// # Two profiles in one page
//
// The compat series carry the names and labels the Strimzi MirrorMaker 2 dashboard queries, as Kafka's JMX
// MBeans and Strimzi's JMX exporter rules produce them: gauges only (record_count has no _total), label values
// quoted by Kafka's jmxSanitize wherever Kafka would quote them (connector names like "A->B.Source" and MM2
// client ids, with the quotes in the value), topic = the remote topic on the MirrorSourceConnector series,
// '.' turned '_' in consumer fetch metrics. The windowed -min/-max/-avg/-rate values copy Kafka's SampledStat
// with its default 2 samples x 30 s: NaN when the window holds no record, the bare name the last value, all
// computed at scrape time.
//
// The native kmirror_* series follow Prometheus' conventions (base units, _total counters, histograms,
// state-sets) and are what kmirror's own alerts use. Their labels are connector, source, target (the cluster
// aliases), topic (the source topic) and partition; kmirror_topic_mapping_info joins topic to remote_topic.
//
// # Series
//
// Per source partition (SourcePartition), compat, labels source, target, topic (remote), partition, all gauges:
//
//	kafka_connect_mirror_mirrorsourceconnector_record_count             records acknowledged (cumulative)
//	kafka_connect_mirror_mirrorsourceconnector_record_rate              ... per second, windowed
//	kafka_connect_mirror_mirrorsourceconnector_byte_count               value bytes fetched (cumulative)
//	kafka_connect_mirror_mirrorsourceconnector_byte_rate                ... per second, windowed
//	kafka_connect_mirror_mirrorsourceconnector_record_age_ms{,_min,_max,_avg}          fetch time - record ts
//	kafka_connect_mirror_mirrorsourceconnector_replication_latency_ms{,_min,_max,_avg} ack time - record ts
//
// Per source partition, native, labels connector, source, target, topic (source), partition:
//
//	kmirror_replicated_records_total            counter  records acknowledged
//	kmirror_replicated_bytes_total              counter  key+value+header bytes acknowledged (AckedSize)
//	kmirror_provenance_skipped_records_total    counter  records the cycle guard did not copy (Skipped); only once it has
//	kmirror_source_end_offset                   gauge    source end offset; absent while unknown
//	kmirror_replicated_offset                   gauge    next source offset to replicate
//	kmirror_replication_lag_records             gauge    max(0, end - replicated); absent while end unknown
//	kmirror_replication_lag_seconds             gauge    0 when caught up, else now - head record ts (or when first seen); absent while end unknown
//	kmirror_last_replicated_timestamp_seconds   gauge    source ts of the last acknowledged record
//	kmirror_partition_status{status}            gauge    state-set: ok, warn, stall, stop, rewind, truncated, paused
//
// Per topic (connector, source, target, topic), native:
//
//	kmirror_replication_latency_seconds         histogram  ack time - record ts
//	kmirror_record_age_seconds                  histogram  fetch time - record ts
//	kmirror_topic_mapping_info{source,target,topic,remote_topic}  gauge 1
//
// The histograms have classic buckets from 5 ms to 600 s and native (exponential, schema 3: factor 2^(1/8),
// at most 160 buckets) buckets for scrapers that negotiate protobuf.
//
// Per checkpointed group and downstream partition (CheckpointLatency), compat, labels source, target, group,
// topic, partition: kafka_connect_mirror_mirrorcheckpointconnector_checkpoint_latency_ms{,_min,_max,_avg}
// (gauges, per key: MM2's shared-sensor quirk is not copied); native kmirror_checkpoint_latency_seconds
// {connector} (histogram).
//
// Per librdkafka client (ClientStats), native, labels connector, task, role, client (+ broker):
// kmirror_client_queue_{messages,bytes,max_messages,max_bytes} (producers), kmirror_client_{transmitted,
// received}_bytes_total, kmirror_client_broker_{rtt_avg,rtt_p99,throttle_avg,throttle_max}_seconds (absent
// when the statistics interval saw no request), kmirror_client_broker_{tx_errors,rx_errors,
// request_timeouts}_total. Compat, label clientid (quoted): kafka_consumer_fetch_manager_records_lag{clientid,
// topic,partition} (high watermark - position of each assigned partition; the high watermark even under
// read_committed, where Java uses the last stable offset), kafka_{consumer,producer}_{incoming,outgoing}
// _byte_total (counters), kafka_producer_buffer_available_bytes. A consumer without librdkafka statistics
// (ConsumerLags: a source task's consumer that knows of more partitions than kmirror serve's
// --consumer-stats-max-partitions) has only kafka_consumer_fetch_manager_records_lag, from the task's own
// sample of the high watermark and the replicated position.
//
// Runtime (tasks.Observer), this worker's units only: kafka_connect_worker_connector_count,
// kafka_connect_worker_task_count, kafka_connect_worker_connector_{running,paused,failed,unassigned,
// restarting,total}_task_count{connector} (Connect counts a connector's tasks cluster-wide on every worker
// hosting one; these count this worker's, so sum() is the cluster's), kafka_connect_connector_status
// {connector,task,status} = 1, kmirror_connector_state{connector,state} and kmirror_task_state{connector,task,
// state} (state-sets over unassigned, running, paused, failed, restarting, stopped), kmirror_worker_leader.
// Compat connector labels are quoted; native ones are not. Also Connect's coordinator metrics, tagged with the
// worker id as clientid (quoted when it has a ':'): kafka_connect_coordinator_assigned_connectors{clientid} and
// kafka_connect_coordinator_assigned_tasks{clientid}, the units the store assigns to this worker (started or
// not); and kafka_connect_worker_rebalance_rebalancing, 1 while this worker is in an assignment change: a unit
// that left it has not stopped and released yet, a unit it was given has not been claimed yet (its previous
// holder still drains), or a task of a new task set has not been claimed yet. kmirror has no stop-the-world
// rebalance: units that did not change replicate on meanwhile, so the gauge says "this worker hands over or
// takes up work", not "the cluster is stopped".
//
// Per source task run (SourceTask), compat, labels connector (quoted), task, gauges fed by the task's committer
// every commit round (100 ms), never per record:
//
//	kafka_connect_connector_task_offset_commit_{avg,max}_time_ms  successful commit rounds to PostgreSQL, in ms
//	                                                               (fractional), 2 x 30 s window; NaN when empty
//	kafka_connect_source_task_source_record_active_count          records handed to the producer and not yet
//	                                                               acknowledged, last sample
//	kafka_connect_source_task_source_record_active_count_{max,avg}  ... over the window's samples
//
// Like Connect, which times a flush with nothing to write too, a round with nothing new to store counts, so an
// idle task averages about 0 rather than NaN.
//
// kmirror_unit_notices{connector,task,kind} counts the notices a unit shows beside its state
// (source_unreachable, target_unreachable, data_not_replicated, source_truncated, source_topic_recreated,
// remote_topic_recreated, writes_paused, aborted_records_replicated, group_not_shown, failed for a FAILED unit,
// ...: the kinds of GET /connectors/{c}/notices), one series per kind shown and none for kinds not shown; alert
// on `kmirror_unit_notices > 0`.
//
// Health, for the alerts (deploy/prometheus/kmirror-rules.yaml): kmirror_database_up (1 while this worker's
// last heartbeat reached PostgreSQL, 0 after one failed), and per checkpoint task run {connector,task}
// kmirror_checkpoint_round_timestamp_seconds (the last round that finished without error, the run's start
// until then) and kmirror_checkpoint_interval_seconds (emit.checkpoints.interval.seconds).
//
// Verdicts (SetVerdictSource), exported by the worker holding the leader lease only, since they are drawn from
// the whole cluster's reports in PostgreSQL (GET /connectors/{c}/partitions, docs/partitions.md):
// kmirror_connector_verdict{connector,verdict,severity} = 1 for each verdict the connector has now (none for
// verdicts it has not), and kmirror_task_verdict{connector,task,verdict,severity} = 1 for each task a verdict
// names (capacity advice, lagging or stale tasks). A scrape of the leader reads the store for them, bounded to
// 5 s; if that fails they are left out and promhttp_metric_handler_errors_total counts it.
//
// kmirror_connector_partition_moves_total{connector,reason} counts the partitions a source connector's planner
// moved between its tasks by measured load (docs/partitions.md): reason spread for a hot partition taken off an
// overloaded task, pack for the cold one exchanged for it; on the worker running the connector's planner.
//
// REST (HTTPMiddleware): kmirror_http_requests_total{route,method,code}, kmirror_http_request_duration_seconds
// {route}. Then Go's go_* and process_* collectors, and promhttp_metric_handler_*.
//
// # Cardinality
//
// One source partition costs 27 series: 12 compat, 14 native (7 gauges and counters + 7 status), and 1
// kafka_consumer_fetch_manager_records_lag of its task's consumer (one more, the cycle guard's counter, where
// it skips records: docs/provenance.md). One replicated topic adds 39 (two classic
// histograms of 19 series each, and the mapping) whatever its partition count. 10,000 partitions in 100
// topics therefore cost 270,000 + 3,900 ≈ 274,000 series, spread over the workers that run them; at about
// 1-2 KiB per series in Prometheus' head block that is some 0.3-0.5 GiB there. A checkpointed group costs 4
// series per partition it checkpoints (as in MM2), so 1,000 groups x 100 partitions is 400,000 series. A task
// costs 7 runtime series plus 5 per source task run, a connector 6 (+6 per connector with tasks here), a client
// 6-9 plus 7 per broker; a worker adds 3 (assigned connectors and tasks, rebalancing).
//
// Scraping costs grow with it: a worker with 10,000 busy partitions serves a 29 MB text page in about 1.5 s of
// one core and 330 MB of short-lived allocations, most of it client_golang sorting and encoding
// (BenchmarkScrape10000Partitions); scrape such workers every 30 s or more, with compression.
//
// The hot path (SourcePartition.Fetched and Acked) takes one uncontended mutex per call and counts the
// observation in the partition's own histogram buckets, without allocating once a bucket exists
// (BenchmarkSourcePartitionHotPath: 94 ns for both calls, 195 ns when they observed client_golang histograms);
// the topic-level histograms (sums over the topic's partitions, exported with client_golang's classic and
// native buckets, TestHistMatchesClientGolang) and everything windowed are computed when scraped.
package metrics
