package source

import (
	"testing"
	"time"

	"pgregory.net/rapid"
)

// skipModel drives a partition with records forwarded, skipped by the cycle guard, acknowledged, failed,
// staged and committed in transactions, and checks after every step that the committable offset (acked)
// never passes a forwarded record the target has not acknowledged (or, in a transaction, committed), and that
// it reaches the last record read once nothing is left in flight.
type skipModel struct {
	p        *sourcePartition
	next     int64
	read     []int64 // source offsets read, in order
	forward  map[int64]bool
	skips    map[int64]bool // the guard's decision per offset: the same whenever the record is read
	done     map[int64]bool // forwarded records reported written (and committed, in a transaction)
	inflight []int64        // forwarded, not reported
	staged   []int64        // acknowledged inside the open transaction
	broken   bool
	batched  bool // the C path's per-run bookkeeping
	down     int64
}

func newSkipModel(batched bool) *skipModel {
	return &skipModel{p: newSourcePartition(testTP, "A.orders", -1, ""), forward: map[int64]bool{}, skips: map[int64]bool{}, done: map[int64]bool{}, batched: batched}
}

func (m *skipModel) consume(t *rapid.T, skip bool) {
	off := m.next
	m.next += 1 + rapid.Int64Range(0, 2).Draw(t, "gap")
	m.read = append(m.read, off)
	if decided, ok := m.skips[off]; ok {
		skip = decided
	}
	m.skips[off] = skip
	if skip {
		m.p.skipRun(off, 1)
		return
	}
	m.forward[off] = true
	m.inflight = append(m.inflight, off)
	if m.batched {
		m.p.forwardedBatch(off, off, tsOf(off), 1, 1)
	} else {
		m.p.forwarded(off, tsOf(off), 1, 1)
	}
}

func (m *skipModel) ack(t *rapid.T, txn bool) {
	if len(m.inflight) == 0 {
		return
	}
	off := m.inflight[0]
	m.inflight = m.inflight[1:]
	m.down++
	switch {
	case txn:
		m.p.stage(m.down)
		if !m.broken {
			m.staged = append(m.staged, off)
		}
	case m.batched:
		if m.broken {
			m.p.droppedRun(1)
			return
		}
		m.p.ackedRun(off, m.down, 1, tsOf(off), nil)
		m.done[off] = true
	default:
		m.p.ack(m.down)
		if !m.broken {
			m.done[off] = true
		}
	}
}

func (m *skipModel) commit() {
	m.p.committedTxn(time.Now(), nil)
	for _, off := range m.staged {
		m.done[off] = true
	}
	m.staged = nil
}

func (m *skipModel) fail() {
	if len(m.inflight) == 0 {
		return
	}
	m.inflight = m.inflight[1:]
	if m.batched {
		m.p.failBatched()
	} else {
		m.p.fail()
	}
	m.broken = true
}

// restart is a new pipeline: it reads again from the partition's acked offset.
func (m *skipModel) restart() {
	m.p.abortedTxn()
	m.staged = nil
	acked := m.p.reset()
	m.inflight, m.broken = nil, false
	m.next = acked + 1
	kept := m.read[:0]
	for _, off := range m.read {
		if off <= acked {
			kept = append(kept, off)
		} else {
			delete(m.forward, off) // read and forwarded again
		}
	}
	m.read = kept
}

func (m *skipModel) check(t *rapid.T) {
	acked, _ := m.p.progress()
	for _, off := range m.read {
		if off > acked {
			break
		}
		if m.forward[off] && !m.done[off] {
			t.Fatalf("acked %d passes forwarded record %d, which is not written", acked, off)
		}
	}
	if len(m.inflight) == 0 && len(m.staged) == 0 && !m.broken && len(m.read) > 0 {
		if last := m.read[len(m.read)-1]; acked != last {
			t.Fatalf("nothing in flight, yet acked %d is not the last record read %d", acked, last)
		}
	}
}

func runSkipModel(t *testing.T, batched, txns bool) {
	rapid.Check(t, func(t *rapid.T) {
		m := newSkipModel(batched)
		for range rapid.IntRange(1, 200).Draw(t, "steps") {
			switch op := rapid.IntRange(0, 9).Draw(t, "op"); {
			case op < 3:
				m.consume(t, false)
			case op < 5:
				m.consume(t, true)
			case op < 8:
				m.ack(t, txns)
			case op == 8 && txns:
				m.commit()
			case op == 8:
				m.fail()
			default:
				if rapid.IntRange(0, 3).Draw(t, "restart") == 0 {
					m.restart()
				}
			}
			m.check(t)
		}
	})
}

func TestSkipsNeverPassAnUnwrittenRecordGoPath(t *testing.T)  { runSkipModel(t, false, false) }
func TestSkipsNeverPassAnUnwrittenRecordCPath(t *testing.T)   { runSkipModel(t, true, false) }
func TestSkipsNeverPassAnUncommittedTransaction(t *testing.T) { runSkipModel(t, false, true) }

func TestSkipsMergeWhileNothingIsForwardedBetween(t *testing.T) {
	p := newSourcePartition(testTP, "A.orders", -1, "")
	p.forwarded(0, tsOf(0), 1, 1)
	for off := int64(1); off <= 100; off++ {
		p.skipRun(off, 1)
	}
	if p.skips.len() != 1 {
		t.Fatalf("%d skip marks behind one forwarded record, want 1", p.skips.len())
	}
	if acked, _ := p.progress(); acked != -1 {
		t.Fatalf("acked %d before the forwarded record was acknowledged", acked)
	}
	p.ack(7)
	if acked, _ := p.progress(); acked != 100 {
		t.Fatalf("acked %d after the acknowledgement, want 100", acked)
	}
	if p.skippedTotal != 100 {
		t.Fatalf("skippedTotal %d, want 100", p.skippedTotal)
	}
}
