package source

import (
	"context"
	"errors"
	"testing"

	"pgregory.net/rapid"
)

// Whatever the target acknowledges, fails or leaves in flight, and whenever commits happen or fail: the offset
// stored for a partition is one the target acknowledged, with every record before it acknowledged too (nothing
// committed beyond what the target acknowledged), and it never moves backwards.
func TestCommittedOffsetsNeverPassTheAcknowledgedOnes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		env := &commitRecorder{}
		parts := []*sourcePartition{startedPartition("a"), startedPartition("b")}
		c := testCommitter(env, parts...)
		type model struct {
			next       int64   // the next source offset to forward
			inflight   []int64 // forwarded, not reported yet
			contiguous int64   // the last offset acknowledged with all forwarded before it acknowledged; -1 none
			broken     bool    // a delivery failed: nothing after it counts until the pipeline restarts
			stored     int64   // what the store holds; -1 nothing
		}
		ms := []*model{{contiguous: -1, stored: -1}, {contiguous: -1, stored: -1}}
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			i := rapid.IntRange(0, 1).Draw(t, "partition")
			p, m := parts[i], ms[i]
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0: // forward, past a compacted gap sometimes
				if m.broken {
					continue // the poll loop stops handing the partition's records over
				}
				m.next += rapid.Int64Range(0, 2).Draw(t, "gap")
				p.forwarded(m.next, 1_700_000_000_000+m.next, 10, 5)
				m.inflight = append(m.inflight, m.next)
				m.next++
			case 1: // the target acknowledges the oldest
				if len(m.inflight) == 0 {
					continue
				}
				off := m.inflight[0]
				m.inflight = m.inflight[1:]
				p.ack(off * 2)
				if !m.broken {
					m.contiguous = off
				}
			case 2: // the target fails the oldest
				if len(m.inflight) == 0 {
					continue
				}
				m.inflight = m.inflight[1:]
				p.fail()
				m.broken = true
			case 3, 4: // commit, which the store may refuse
				failing := rapid.Bool().Draw(t, "store fails")
				env.commitErr = nil
				if failing {
					env.commitErr = errors.New("database down")
				}
				before := len(env.offsets)
				err := c.commit(context.Background())
				if err != nil && !failing {
					t.Fatalf("commit: %v", err)
				}
				for _, batch := range env.offsets[before:] {
					for _, o := range batch {
						off, _ := jsonInt(o.Offset["offset"])
						j := 0
						if o.Partition["topic"] == "b" {
							j = 1
						}
						if off > ms[j].contiguous {
							t.Fatalf("partition %d: offset %d committed, the target acknowledged through %d only", j, off, ms[j].contiguous)
						}
						if off < ms[j].stored {
							t.Fatalf("partition %d: committed offset moved back from %d to %d", j, ms[j].stored, off)
						}
						ms[j].stored = off
					}
				}
				if err == nil {
					for j := range ms {
						if ms[j].stored != ms[j].contiguous {
							t.Fatalf("partition %d: a successful commit stored %d, acknowledged through %d", j, ms[j].stored, ms[j].contiguous)
						}
					}
				}
			}
		}
	})
}
