package source

// A partition's bookkeeping on the C data path (cpath.go), which reports what moved per run of records
// rather than per record.

import "github.com/kmirror/kmirror/connectors/mirror"

// forwardedBatch records n records of valueBytes value bytes in all handed to the producer by the C path.
func (p *sourcePartition) forwardedBatch(first, last, firstTS int64, n int, valueBytes int64) {
	p.mu.Lock()
	if p.batched == 0 {
		p.batchedHead = first
	}
	p.sent.push(sentBatch{last: last, ts: firstTS})
	p.batched += n
	p.pushed += uint64(n)
	p.bytes += uint64(valueBytes)
	p.ranges.ForwardedN(n)
	p.mu.Unlock()
}

// ackedRun records n records at source offsets first.. acknowledged at target offsets target.., both
// contiguous, the last with source timestamp ts: ack for each in order, offset syncs by MM2's rules included.
func (p *sourcePartition) ackedRun(first, target, n, ts int64, syncs *offsetSyncer) {
	var send []mirror.OffsetSync
	p.mu.Lock()
	p.batched = max(p.batched-int(n), 0)
	p.acks += uint64(n)
	p.confirmed = true
	p.acked = first + n - 1
	p.lastTS = ts
	p.delivered = true
	p.batchedHead = first + n // the next forwarded record is at or after it
	p.dropSentLocked()
	p.ranges.AckedRun(first, target, int(n))
	if p.syncs != nil {
		p.syncs.RecordRun(first, target, n, func(s mirror.OffsetSync) { send = append(send, s) })
	}
	p.applySkipsLocked()
	p.mu.Unlock()
	if syncs != nil {
		for _, s := range send {
			syncs.send(s)
		}
	}
}

// ackedUnmappedRun is ackUnmapped for n records, the last at source offset last (the C path checked the
// partition had a confirmed delivery first).
func (p *sourcePartition) ackedUnmappedRun(last, n, ts int64) {
	p.mu.Lock()
	p.batched = max(p.batched-int(n), 0)
	p.acks += uint64(n)
	p.acked = last
	p.lastTS = ts
	p.batchedHead = last + 1
	p.dropSentLocked()
	p.ranges.DroppedN(int(n))
	p.ranges.Unmapped() // as ackUnmapped: the next range says records before it have no target offsets
	p.applySkipsLocked()
	p.mu.Unlock()
}

// droppedRun counts n reports of a partition after its failure: they change nothing.
func (p *sourcePartition) droppedRun(n int64) {
	p.mu.Lock()
	p.batched = max(p.batched-int(n), 0)
	p.ranges.DroppedN(int(n))
	p.mu.Unlock()
}

// failBatched is fail for the C path: the partition stops advancing until the pipeline restarts.
func (p *sourcePartition) failBatched() {
	p.mu.Lock()
	p.batched = max(p.batched-1, 0)
	p.broken = true
	p.ranges.Dropped()
	p.mu.Unlock()
}

// dropSentLocked forgets the forwarded batches every record of which has been acknowledged.
func (p *sourcePartition) dropSentLocked() {
	for {
		b, ok := p.sent.peek()
		if !ok || (b.last >= p.batchedHead && p.batched > 0) {
			return
		}
		p.sent.pop()
	}
}
