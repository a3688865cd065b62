package source

import "fmt"

// A source consumer reads committed records only unless the user chose isolation.level=read_uncommitted
// (MM2's default). Then records of aborted source transactions are copied to the target as ordinary records.
// The consumer cannot tell an aborted record from a committed one, but it skips the offset of every
// transaction marker: once a partition skipped offsets, the offset map marks its ranges Uncommitted (no
// translation into them is exact: a group may resume on the target at a record it never saw on the source),
// and the task shows a notice for the partition.

// readsUncommitted tells whether the run's source consumer reads uncommitted records.
func (r *sourceRun) readsUncommitted() bool {
	return r.consumerProps[isolationLevelKey] == isolationReadUncommitted
}

// The librdkafka property of the consumer's isolation level and the value that reads uncommitted records.
const (
	isolationLevelKey        = "isolation.level"
	isolationReadUncommitted = "read_uncommitted"
)

// flagSkipsIfUncommitted makes the partition's offset map watch for skipped offsets when the consumer reads
// uncommitted records. Call it whenever the partition gets a new tracker.
func (p *sourcePartition) flagSkipsIfUncommitted() {
	if p.uncommittedReads {
		p.ranges.FlagSkips()
	}
}

// readUncommitted marks the partition as read by a consumer of uncommitted records.
func (p *sourcePartition) readUncommitted() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.uncommittedReads = true
	p.flagSkipsIfUncommitted()
}

// skippedUncommitted returns the first offset the partition's consumer skipped while reading uncommitted
// records; false when it skipped none (or reads committed records).
func (p *sourcePartition) skippedUncommitted() (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.uncommittedReads {
		return 0, false
	}
	return p.ranges.Skipped()
}

// noticeUncommitted shows, for a partition whose consumer reads uncommitted records and skipped offsets, that
// aborted records may have been copied.
func (r *sourceRun) noticeUncommitted(p *sourcePartition) {
	if !r.readsUncommitted() {
		return
	}
	at, ok := p.skippedUncommitted()
	if !ok {
		return
	}
	msg := fmt.Sprintf("topic %s partition %d holds transactions (the consumer skipped a transaction marker at offset %d; or the topic is compacted), and the source consumer reads with %s=%s: records of aborted transactions are copied to %s as ordinary records, and consumer group translations into this partition are not exact. Remove source.consumer.%s to read committed records only",
		p.tp.Topic, p.tp.Partition, at, isolationLevelKey, isolationReadUncommitted, r.targetAlias, isolationLevelKey)
	r.notice(fmt.Sprintf("uncommitted:%s-%d", p.tp.Topic, p.tp.Partition),
		partitionNotice(NoticeAbortedRecordsReplicated, msg, p.tp.Topic, p.tp.Partition, at, at))
}
