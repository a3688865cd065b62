package source

// # Exactly-once replication (transactions.go)
//
// On a worker started with --exactly-once-source-support=enabled (Connect's exactly.once.source.support),
// every MirrorSourceConnector task replicates in Kafka transactions, as Connect's ExactlyOnceWorkerSourceTask
// runs MirrorSourceTask. exactly.once.support=required only adds the preflight check at validation (the worker
// must be enabled, and MirrorSourceConnector must answer SUPPORTED: a read_committed source consumer);
// "requested" runs the same way without the check. There is no silent fallback: a task that cannot get
// transactions fails, naming the cause.
//
// # The facts
//
//   - The replication producer of task i of connector c has transactional.id kmirror-<c>-<i> (Connect's
//     ${groupId}-${connector}-${taskId}, with kmirror's prefix for the group). The id is the same for every
//     owner of the task, so a new owner's InitTransactions fences the old one in Kafka itself: whatever the old
//     owner still sends or commits is refused, and the transaction it left open is aborted.
//   - A transaction carries the records of one boundary and, for every source partition it touched, the
//     partition's last source offset, written to the offsets topic on the target: mm2-offsets.<source>.internal
//     (or the connector's offsets.storage.topic), compacted, 25 partitions, the very topic and format of Java
//     MM2 in dedicated mode: key ["<connector>",{"cluster":"<source alias>","partition":<p>,"topic":"<source
//     topic>"}], value {"offset":<last replicated source offset>}, the partition Java's producer picks
//     (murmur2 of the key). A committed transaction and its offsets are one atomic fact; an aborted one leaves
//     neither. Java MM2 (or kmirror mm2-offsets) can resume from this topic.
//   - The offsets topic, read with read_committed after InitTransactions, is the truth about where a task
//     resumes. PostgreSQL keeps a copy (written after each commit, for the REST API and the dashboard) that may
//     lag behind; at start-up the higher of the two wins, so progress made before exactly-once was enabled is
//     kept.
//   - The source consumer reads read_committed (unless the user explicitly set read_uncommitted), so records of
//     aborted or open source transactions are never copied.
//   - The offset map (connectors/offsetmap) covers only committed, replicated records: the delivery report of a
//     record stages it, and the map grows over it when its transaction commits. Aborted source records and
//     source markers are source gaps, the target's own commit markers target gaps, so a group on the source
//     translates exactly wherever it is committed: inside an aborted range, on a marker, after one, at the log
//     start (the gap before the first replicated record is kept) and at the log end
//     (server/exactly_once_translate_test.go checks every position of such a log).
//
// # The state machine of a pipeline (owned by the poll loop)
//
//	start ──FenceTaskSet (a changed task set: former task ids fenced first)──►
//	      ──InitTransactions (fences older owners; aborts their open txn)──► read offsets topic ──► idle
//	idle ──first record──► BeginTransaction ──► open
//	open ──records──► open                     (delivery reports only stage the records)
//	open ──boundary reached, lease valid──► produce offsets records ──► CommitTransaction
//	    committed  ──► staged records become replicated (acked, offset map, offset syncs, metrics) ──► idle
//	    retriable  ──► CommitTransaction again (librdkafka allows it), within the commit timeout
//	    must abort ──► AbortTransaction ──► pipeline restarts from the offsets topic
//	    fenced     ──► lease revoked: the run ends fenced; lease valid: pipeline restarts (its InitTransactions
//	                   fences the other producer in turn); the fourth fence within 10 min FAILS the task naming it
//	    unknown    ──► pipeline restarts: its InitTransactions settles the outcome, the offsets topic tells it
//	open ──delivery failure / lease revoked / pipeline error──► AbortTransaction ──► (restart or end)
//	open ──soft stop, everything delivered, lease valid──► commit as above ──► end
//
// Boundaries: transaction.boundary=poll (the default) ends a transaction when the consumer has nothing more
// fetched, or after max.poll.records (500) records, like one poll() of MirrorSourceTask; interval ends it
// every transaction.boundary.interval.ms (default 1 s; Connect's default, the worker's offset.flush.interval.ms
// of 60 s, would hide records from read_committed consumers for a minute). A longer interval means fewer,
// larger transactions (throughput) and records visible later (latency): that is the knob.
//
// # Why no zombie writes
//
// Records count as replicated, and offsets move, only when their transaction committed. A commit is attempted
// only while the run's lease is valid, and a new owner's InitTransactions fences the old producer for good:
// a worker that resumes after a stall finds its commit refused (the chaos suite sees "Producer fenced by newer
// instance" there). Such a worker must not abort or initialize transactions either: when librdkafka needs an
// epoch bump (a record of the transaction timed out) an abort is an InitProducerId with the old epoch, and a
// coordinator holding the new owner's ongoing transaction bumps the epoch for it without comparing epochs,
// which fenced the new owner (seen in CI). So a run without a valid lease never calls either, and a new owner
// fenced while its lease is valid starts its pipeline over instead of failing. The transaction timeout is the producer's delivery timeout (capped below the lease's
// settle window, CapDelivery) plus the interval, so the coordinator also aborts (within its cleanup interval,
// 10 s by default) a transaction that nobody fences, such as one of a task id that no longer exists.
//
// A task whose connector requires exactly-once fails on a worker without the support (no silent fallback).
//
// A target that refuses transactions (no TransactionalId ACL: a non-retriable error) fails the task at once,
// naming the cause; one whose InitTransactions times out (a transaction state log that cannot be created,
// e.g. transaction.state.log.replication.factor above the broker count) fails it after three attempts of the
// run's first pipeline. After a first success, failures restart the pipeline instead (a broker restart).
//
// # Fencing a task set (tasks/fence.go)
//
// A task's own InitTransactions fences only the former owners of its id. When the task set changes (tasks.max,
// new partitions, a stop), partitions move between task ids, and a zombie of a former task id could still
// commit a partition another task now replicates. So, as Connect's herder fences every transactional id of
// the previous generation before the new one starts, the store records the task ids a change owes a fence
// (those whose config changed or that went away; tasks that carry on keep their partitions), and before a
// pipeline initializes transactions it calls env.FenceTaskSet: the first run that finds the fence owed, once
// no run of the former set holds a unit, fences those ids (kafka.FenceTransactionalIDs: librdkafka has no
// FenceProducers, so a short-lived producer per id initializes transactions and closes) and records it; the
// other runs wait. No run of the new set has a producer when the fence lands, so it fences only zombies.
//
// # Altering offsets (offsets_alter.go)
//
// PATCH and DELETE /connectors/{c}/offsets, with the connector STOPPED, are filed by the REST API and applied
// by the worker holding the stopped connector: it fences the connector's former task ids (FenceTaskSet
// again), writes the offsets (tombstones for a reset) to the offsets topic in one transaction
// (kmirror-<c>-offsets), and only then PostgreSQL's copy; the REST API answers once both are done, or with the
// cause. Both copies agree, so the resumed tasks start right after the altered offsets.
//
// # Not yet (issue 16)
//
// Offset syncs are produced after the commit by the shared offset-sync producer (as MM2 does), not inside the
// transaction. Heartbeat and checkpoint tasks do not use transactions (Connect's exactly-once worker runs them
// transactionally too). Every transaction starts a new range in the offset map, because its commit marker
// takes a target offset: translation stays exact, but a poll boundary with small transactions makes many
// ranges. The fence covers the task ids the store saw change: a connector deleted and created again under the
// same name (or one stopped before this fence existed) has no record of its former task ids, whose zombies
// only their own ids' next InitTransactions fence.
