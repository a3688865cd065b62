// Package cpath is the source task's record path in C: records move from a source consumer to a target
// producer inside librdkafka's C API, in batches and paced, and Go sees only the bookkeeping, once per batch
// (issue 15: the per-record cgo calls and C→Go message building were most of the Go pipeline's CPU).
//
// # What it owns
//
// A Pipeline owns one rd_kafka_t consumer (assign-only; the caller's properties, which must name a
// group.id and should say auto.offset.reset=error) and one rd_kafka_t producer. confluent-kafka-go
// exposes no raw handle of its clients, so the pipeline creates its own, from the same librdkafka property
// maps. The C code (cpath.c) declares the librdkafka functions it calls (rdk.h) and links against the
// static librdkafka bundled with confluent-kafka-go, which package kafka's import brings into the binary.
// Only this package and connectors/kafka touch librdkafka. Admin operations stay with package kafka.
//
// # Start
//
// An idempotent producer sends nothing until it has its producer id, and librdkafka 2.11.1 asks for it in
// 500 ms steps until a broker it learned from the metadata is up: most of a second after New. ProducerReady
// waits for it, so that the caller consumes only once records can go (the source task's clocks on
// unacknowledged records — the overdue watch, the stall pause — start when a record is handed over).
// librdkafka says so only in a debug line of its "eos" context, so New adds that context to the producer's;
// when the configuration asked for no debug context, those lines are dropped before they reach Log.
//
// # The contract
//
// Each source partition (Part) is produced to the same partition of its remote topic, key, value, headers
// and timestamp kept (a record without a timestamp gets the producer's time, as on the Go path). Step:
//
//  1. serves the producer's delivery reports and the consumer's error and statistics callbacks;
//  2. if the key and value bytes produced but not yet reported exceed PaceBytes × partitions, waits up to
//     5 ms in the producer's poll and returns (Batch.Paced);
//  3. otherwise consumes up to a batch with rd_kafka_consume_batch_queue (waiting only when it holds no
//     records back; up to MaxBatch records in hand) and produces what it holds, each through the batch gate
//     (below). The producer sends the consumed value in place: the consumed message is its opaque, lent until
//     the delivery report gives it back (destroying the pipe purges and serves those first; clients whose
//     messages never came back are left behind, since destroying them would wait for ever). A record the gate
//     holds back stays, with the later records of its partition, while the other partitions' records go
//     on; after a full producer queue, everything stays. When a pass moved nothing (or there is no room to
//     consume), it waits up to 10 ms for deliveries, until a partition with held records can take them, and
//     returns, keeping what stayed for the next Step: Go sees acknowledgements at least that often, so stall
//     detection, commits and capacity advice (Batch.TargetWait) work as on the Go path. A seek makes every
//     record of the partition in hand stale.
//
// StepWithin bounds step 3 by the caller's permission to write (the run's lease, ValidFor): past it on the
// monotonic clock — checked after the consume and every 64 records of the pass — nothing more is produced
// and what is in hand stays. The caller checks its lease before each step, but the step's wait for records
// lies between that check and the hand-over: a worker stopped (SIGSTOP) in it resumed with records in hand
// long after its partitions had moved, and wrote them after the successor's (the fault suite's
// TestStallWorker saw 2 such stale records on B).
//
// Steps runs steps in C for up to a budget (the source task's is 20 ms) and hands Go their batches gathered
// in one: every step's permission is counted from the call, and the call returns early once a step found the
// source idle, once the permission has run out, and as soon as anything Go must act on appears — a failure,
// an error of either client, statistics, log lines, Interrupt. Go then applies the per-partition facts of
// several steps at once; what it does between calls (the lease check, the stall pause, commits) has periods
// far longer than the budget.
//
// The batch gate gives each partition one batch at a time. librdkafka 2.11.1's idempotent producer counts a
// partition's in-flight records against its limit of five in-flight requests, so a partition has one
// ProduceRequest in flight; and a record queued behind it once its linger.ms has expired makes the broker
// thread poll with a zero timeout until the response comes: it spins. At tasks.max 8 on two cores, eight
// spinning producer threads starved the brokers, whose answers came later still, and the pipelines
// collapsed (docs/benchmarks.md). So a record joins its partition's batch only while the batch fits one
// request (batch.size and message.max.bytes, less generous overheads: filling batch.size key and value bytes
// would leave a remainder queued behind the request) and is younger than 80% of linger.ms or was begun in
// the same step. A record that cannot join makes Step send every pending batch at once (rd_kafka_flush
// for 1 ms, which makes queued records ready while it runs); a sent batch takes nothing more until each of its
// records has been reported (with linger.ms 0 there is nothing to kick: records go at once). PaceBytes stays
// as a bound of the whole pipeline.
//
// The gate also bounds how many partitions have a batch at once (Config.OpenLatency): librdkafka 2.11.1 puts
// one partition in each ProduceRequest and a broker answers a connection's requests one at a time, so a
// producer completes only so many partition batches a second. A pipeline of 1,250 partitions handed its first
// fetch of all of them to the producer at once; the target answered about 60 requests a second, the last
// partitions' records waited past the overdue allowance, and every pipeline restarted, again and again. Now
// a partition opens a batch only while fewer than rate × OpenLatency partitions have one (the rate of
// completed batches, measured every 250 ms; at least 64), and its records otherwise stay in hand, where no
// delivery clock runs, with the consumer's prefetch bound behind them. With few partitions, or a target
// that keeps up, the bound lies above the partitions with records and changes nothing.
//
// The Batch it returns says, per partition and never per record:
//
//   - Forwarded: records handed to the producer (count, first and last source offset, the next offset the
//     consumer returns, value bytes — MM2's byte count —, key+value+header bytes, the last timestamp);
//   - Acked: runs of delivery reports in produce order. A Mapped run is contiguous in source and target
//     offsets, so (First, Target, Records) is exactly the list of (source, target) pairs the offset map and
//     the offset syncs need; a new run starts at any gap on either side. An Unmapped run is records
//     librdkafka reported written without an offset (offset -1001: a request whose answer was lost, followed
//     by a later request of the partition that succeeded) after a delivery of the partition from this
//     producer carried an offset: the broker then held the producer's state, and the implicit
//     acknowledgement is true, so they count as acknowledged without a target offset (the Go path's
//     ackUnmapped). Without such a confirmed delivery first, the report is a Failure with Unconfirmed set.
//     Dropped runs are reports on a partition after its first failure: they count for nothing;
//   - Failures: the first failed delivery of each partition (after it the partition is broken: nothing
//     counts until the caller builds a new pipeline), or a record the producer refused (Refused; it was not
//     forwarded). After any failure Step stops consuming and producing: the caller purges, flushes and
//     restarts from its acknowledged offsets, so nothing lands out of order;
//   - ConsumerErrors: per-partition consumer errors (an offset out of range: a gap or a re-created topic,
//     which the caller handles with Watermarks and Seek) and client-wide ones (Part -1);
//   - Consumed, InFlightBytes, OpenBatches: for metrics and pacing.
//
// The first record of a partition in a pipeline is checked against where it was assigned, as the Go
// path's firstRecord does: a first record past the start (and not only because of compaction, transaction
// markers or aborted transactions) means the consumer skipped records, so the record is dropped, the
// partition is sought back to its start once (Forwarded.Reread), and what the re-read returns first is
// taken as it is. Records of the same consumed batch after the seek are stale and dropped.
//
// # Threads
//
// librdkafka calls the delivery, error, statistics and log callbacks from rd_kafka_poll, which only Step, Flush
// and Close call: everything in cp_pipe is touched by the one goroutine driving the pipeline, or on its behalf
// by the pipeline's own thread while that goroutine waits in Steps (below). Watermarks,
// CachedWatermarks and Interrupt may be called from others (librdkafka's calls are thread-safe; Close waits
// for them). Batches are copied into Go memory; no C pointer outlives a call.
//
// # A thread of its own
//
// Steps runs its steps in a thread the pipeline starts for them (cp_runner_start), not in the goroutine's:
// the goroutine hands the run over (cp_run_submit), waits in Go's poller for the byte the thread writes to a
// pipe when the run ends, and collects the output (cp_run_result). The hand-overs go through the runner's
// mutex, so the goroutine and the thread never touch the pipeline at once, and everything the thread wrote is
// seen by the goroutine after. The run's permission to write is counted from the hand-over, as a call's from
// its start.
//
// Why: a goroutine that spends its time in calls into C never gives its P back to Go's scheduler, and Go
// 1.26's sysmon takes the P of any goroutine that has not been rescheduled for 10 ms, even inside a C call
// (runtime/proc.go, retake); while it takes Ps it never sleeps longer than 20 µs. At tasks.max 8 that thread
// alone switched 23,000–44,000 times and spent 0.3–0.8 CPU s in 8 s, about the gap to the C pipe
// (docs/benchmarks.md). A goroutine parked in the poller is rescheduled on every run, so sysmon finds nothing
// to take and backs off: with the thread it did about half the work (the rest is confluent-kafka-go's pollers,
// which block in C for 100 ms at a time). If the thread or its pipe cannot be had, Steps runs in the calling
// thread as before (OwnThread tells which; the source task then gives the goroutine a P of its own).
//
// # Errors
//
// Error events of both clients reach Go in the Batch, unclassified: the consumer's as client-wide
// ConsumerErrors (Part -1), the producer's as ProducerErrors; a fatal error carries the underlying code and
// message (rd_kafka_fatal_error) and answers kafka.IsFatal. Go decides what they mean with package kafka's
// helpers, as for confluent-kafka-go's clients: the pipeline keeps the producer's first fatal error (Fatal)
// and first failed authentication (AuthFailure: kafka.IsAuthentication, so a failed SASL or TLS handshake or
// a refused certificate), and the source task fails on them as the Go path does. It then drops what the
// producer still holds instead of flushing it: that producer can deliver nothing, and waiting kept a task
// whose records were queued before the failure was known RUNNING until the stop budget ran out (the gap
// server's TestWrongTaskPasswordFailsTheTask showed with KMIRROR_TEST_DATA_PATH=c, now closed).
//
// # What stays out
//
// Transactions (exactly-once mode) stay on the Go path. librdkafka's log lines are queued (log.queue) and
// served by the same polls, then handed to Config.Log at the levels package kafka uses.
package cpath
