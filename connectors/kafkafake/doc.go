// Package kafkafake is an in-memory stand-in for the Kafka clients a source task's data path uses, so that the
// replication core can be tested without brokers, deterministically, under faults a real cluster produces only
// by chance. It is pure Go (no cgo) and imports nothing of the project but kmtype.
//
// A [Log] is a cluster: topics with ids (a deleted and re-created topic gets a new one), partitions with a log
// start and end offset, records at offsets that may have gaps (compaction), transactions whose commit and abort
// markers take offsets of their own, and a last stable offset held back by open transactions. Its [Consumer]
// reads it as an assign-only librdkafka consumer does (auto.offset.reset=error, isolation.level as given); its
// [Admin] answers topic ids and log offsets.
//
// A [Target] is a Log that [Producer]s write to through a fault schedule: per delivery attempt it can accept,
// refuse, hold back (delay), write but lose the acknowledgement, acknowledge without an offset, run out of room,
// go fatal, fence the transactional id, or fail authentication. Deliveries keep librdkafka's order per partition.
//
// The method sets follow the wrappers in connectors/kafka, name for name and signature for signature, with this
// package's own value types in place of theirs (Start, Record, Delivery, PartitionID, LogOffsets, Header) and
// kmtype's PartitionError and TopicShape, which both packages name, so that an interface the engine declares over what it uses can be met by either:
//
//	*kafka.Consumer: Assign Seek Watermarks CachedWatermarks Position Poll Close Admin
//	*kafka.Producer: Produce Forward Flush Purge Outstanding Fatal AuthFailure Close Admin
//	                 InitTransactions BeginTransaction CommitTransaction AbortTransaction
//	*kafka.Admin:    TopicIDs TopicShapes LogOffsets PartitionCount AuthFailure Close
//
// Errors are classified as kafka's are, by functions of the same names (IsRetriable, IsFatal, IsFenced,
// IsOffsetOutOfRange, IsUnknownTopic, IsPurged, IsRecordTooLarge, TxnRequiresAbort).
package kafkafake
