package source

// A partition's bookkeeping of the records the cycle guard did not copy (provenance.go). A skipped record is
// dealt with — a restart need not read it again — but it may count only once every record before it is: the
// committed offset never passes a record the target has not acknowledged. So a skip waits behind the records
// forwarded before it and is applied when the last of them is reported; it moves acked forward as a source gap
// would (compaction, transaction markers), and the offset map, which knows nothing of it, treats it as one: a
// group positioned at it resumes at the next copied record's target offset.

// skipMark is the latest skip among those that follow the same forwarded records: the offset of the last
// skipped record, and how many records had been forwarded (pushed) when it was skipped.
type skipMark struct {
	offset int64
	after  uint64
}

// skipRun records that the guard skipped n records, the last at source offset last, none forwarded in between.
func (p *sourcePartition) skipRun(last int64, n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.skippedTotal += uint64(n)
	if m, ok := p.skips.back(); ok && m.after == p.pushed {
		m.offset = last // nothing forwarded since: the marks merge
	} else {
		p.skips.push(skipMark{offset: last, after: p.pushed})
	}
	p.applySkipsLocked()
}

// applySkipsLocked applies every skip whose earlier records have all been reported (acknowledged, or in
// exactly-once mode committed). After a failed delivery nothing advances; the pipeline restarts and reads the
// skipped records again, which the guard skips again.
func (p *sourcePartition) applySkipsLocked() {
	if p.broken || p.skips.len() == 0 {
		return
	}
	waiting := uint64(p.inflight.len() + p.batched + p.staged.len())
	done := p.pushed - min(waiting, p.pushed)
	for {
		m, ok := p.skips.peek()
		if !ok || m.after > done {
			return
		}
		p.skips.pop()
		p.acked = max(p.acked, m.offset)
	}
}

// dropSkipsLocked forgets the skips not applied yet: the pipeline restarts from acked, or the records before
// them were not written after all (an aborted transaction).
func (p *sourcePartition) dropSkipsLocked() { p.skips = ring[skipMark]{} }

// back returns the newest element, to update in place.
func (r *ring[T]) back() (*T, bool) {
	if r.size == 0 {
		return nil, false
	}
	return &r.buf[(r.head+r.size-1)%len(r.buf)], true
}
