package source

import (
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
)

// The exactly-once side of a source partition (transactions.go): a delivery report inside an open
// transaction only stages the record; the partition advances over it when the transaction commits, and
// forgets it when the transaction aborts. So acked, the offset map and the offset syncs never cover a record a
// read_committed consumer of the target could miss.

// stagedRecord is a record the target acknowledged inside the open transaction.
type stagedRecord struct {
	rec        inflightRecord
	downstream int64
}

// stage records that the target acknowledged the oldest forwarded record at downstream, inside the open
// transaction. It counts as an acknowledgement for the stall check: the target is answering.
func (p *sourcePartition) stage(downstream int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	rec, ok := p.inflight.pop()
	if !ok || p.broken {
		p.ranges.Dropped()
		return
	}
	p.acks++
	p.staged.push(stagedRecord{rec: rec, downstream: downstream})
}

// committedTxn advances the partition over every staged record, now that their transaction committed at at.
// It appends the offset syncs to send, in order.
func (p *sourcePartition) committedTxn(at time.Time, syncs []mirror.OffsetSync) []mirror.OffsetSync {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		s, ok := p.staged.pop()
		if !ok {
			p.applySkipsLocked()
			return syncs
		}
		if sync, send := p.replicatedLocked(s.rec, s.downstream); send {
			syncs = append(syncs, sync)
		}
		p.metrics.acked(s.rec.ts, s.rec.size, at)
	}
}

// abortedTxn forgets the staged records: their transaction was aborted (or its outcome is unknown), so the
// next pipeline sends them again from the last committed offset.
func (p *sourcePartition) abortedTxn() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for p.staged.len() > 0 {
		p.staged.pop()
		p.ranges.Dropped()
	}
	p.dropSkipsLocked()
}

// resumeFrom moves the partition's replicated offset up to committed, the offset the last committed
// transaction stored in the target's offsets topic, the truth of exactly-once mode. PostgreSQL's copy may lag
// behind it (it is written after the commit); it is never ahead, except for progress made without
// transactions before exactly-once support was enabled, which is kept.
//
// PostgreSQL's copy holds the offset map with the offsets, so when it lags, the map does not know where the
// records in between were written on the target: the next range says so (offsetmap.Tracker.Unmapped), and a
// group positioned among them translates approximately from the range before instead of skipping them.
func (p *sourcePartition) resumeFrom(committed int64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if committed > p.acked {
		p.acked = committed
		if last, ok := p.ranges.Last(); !ok || committed > last.SourceEnd {
			p.ranges.Unmapped()
		}
	}
}
