package offsetmap_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"testing"

	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/kafkafake"
	"github.com/kmirror/kmirror/connectors/offsetmap"
)

// pipeline drives a tracker as a source task's partition does (source_partition.go), between an in-memory
// source log and an in-memory target whose faults a random schedule decides: records are forwarded in source
// order, acknowledged, refused, acknowledged without an offset, lost after being written, or purged by a
// restart; the pipeline restarts from the last acknowledged offset, and the offsets API may rewind it.
type pipeline struct {
	src      *kafkafake.Log
	tgt      *kafkafake.Target
	rc       bool // the consumer reads committed records only
	cons     *kafkafake.Consumer
	prod     *kafkafake.Producer
	tr       *offsetmap.Tracker
	inflight []int64 // source offsets forwarded, oldest first
	acked    int64   // the last source offset counted as replicated (-1: none)
	broken   bool    // a delivery failed: nothing advances until the restart
	confirm  bool    // a delivery of this producer was confirmed (an unconfirmed one may then count)
	fresh    bool    // the next record forwarded is the first of this pipeline
	startAt  int64   // where this pipeline started reading
	prev     offsetmap.Range
	hadPrev  bool
	rewound  bool // the offsets API moved the partition back, and the tracker has not begun the rewound range yet
	faults   []kafkafake.Fault
}

const srcTopic, dstTopic = "t", "r"

func newPipeline(t *rapid.T) *pipeline {
	p := &pipeline{src: kafkafake.NewLog(), tgt: kafkafake.NewTarget(), rc: rapid.Bool().Draw(t, "read_committed"),
		tr: offsetmap.NewTracker(nil), acked: -1}
	must(t, ignore(p.src.CreateTopic(srcTopic, 1)))
	must(t, ignore(p.tgt.CreateTopic(dstTopic, 1)))
	if !p.rc {
		p.tr.FlagSkips()
	}
	p.tgt.SetFaults(func(a kafkafake.Attempt) kafkafake.Fault {
		if len(p.faults) == 0 {
			return kafkafake.Accept
		}
		f := p.faults[0]
		p.faults = p.faults[1:]
		return f
	})
	p.start(t, kafkafake.OffsetBeginning)
	return p
}

func must(t *rapid.T, err error) {
	if err != nil {
		t.Fatal(err)
	}
}

func ignore[V any](_ V, err error) error { return err }

// start begins a pipeline reading from offset.
func (p *pipeline) start(t *rapid.T, offset int64) {
	p.cons = p.src.NewConsumer(kafkafake.ConsumerOptions{ReadCommitted: p.rc})
	must(t, p.cons.Assign([]kafkafake.Start{{Topic: srcTopic, Offset: offset}}))
	p.prod = p.tgt.NewProducer(p.delivered, kafkafake.ProducerOptions{Manual: true})
	p.fresh, p.startAt, p.broken, p.confirm = true, offset, false, false
	if offset == kafkafake.OffsetBeginning {
		p.startAt = 0
	}
}

// stop purges what the producer holds (those deliveries fail) and forgets what was in flight.
func (p *pipeline) stop(t *rapid.T) {
	must(t, p.prod.Purge(true))
	p.prod.Flush(context.Background())
	p.prod.Close()
	must(t, p.cons.Close())
	p.inflight = nil
	p.tr.Reset()
}

func (p *pipeline) delivered(d kafkafake.Delivery) {
	u := d.Opaque.(int64)
	p.inflight = p.inflight[1:]
	switch {
	case d.Err == nil && !d.Unconfirmed && !p.broken:
		p.acked, p.confirm = u, true
		p.tr.Acked(u, d.Offset)
	case d.Err == nil && d.Unconfirmed && p.confirm && !p.broken:
		p.acked = u
		p.tr.Dropped()
		p.tr.Unmapped()
	default:
		p.broken = true
		p.tr.Dropped()
	}
}

func (p *pipeline) appendSource(t *rapid.T) {
	n := rapid.IntRange(1, 4).Draw(t, "n")
	msgs := make([]kafkafake.Message, n)
	switch rapid.SampledFrom([]string{"plain", "gap", "committed", "aborted", "retention"}).Draw(t, "kind") {
	case "plain":
		must(t, ignore(p.src.Append(srcTopic, 0, msgs...)))
	case "gap":
		must(t, p.src.Skip(srcTopic, 0, int64(n)))
	case "committed", "aborted":
		tx := p.src.BeginTxn()
		must(t, ignore(tx.Append(srcTopic, 0, msgs...)))
		if rapid.Bool().Draw(t, "commit") {
			must(t, tx.Commit())
		} else {
			must(t, tx.Abort())
		}
	case "retention":
		start, end, _, err := p.src.Offsets(srcTopic, 0)
		must(t, err)
		must(t, p.src.DeleteRecordsBefore(srcTopic, 0, rapid.Int64Range(start, end).Draw(t, "before")))
	}
}

// poll forwards the next record, or records the consumer's position when it has nothing more.
func (p *pipeline) poll(t *rapid.T) {
	if p.broken { // the poll loop ends at a failed delivery; the restart action starts the next pipeline
		return
	}
	rec, ok, err := p.cons.Poll(0)
	if kafkafake.IsOffsetOutOfRange(err) { // retention overtook the pipeline: it carries on from the log start
		low, _, err := p.cons.Watermarks(srcTopic, 0, time.Second)
		must(t, err)
		must(t, p.cons.Seek(srcTopic, 0, low))
		p.fresh = false
		return
	}
	must(t, err)
	if !ok {
		if pos, err := p.cons.Position([]kafkafake.Start{{Topic: srcTopic}}); err == nil {
			if next, ok := pos[kafkafake.Start{Topic: srcTopic}]; ok {
				p.tr.ReadThrough(next)
			}
		}
		return
	}
	u := rec.Offset()
	if p.fresh {
		p.fresh = false
		p.tr.ReadFrom(p.startAt)
	}
	p.tr.Forwarded()
	p.inflight = append(p.inflight, u)
	h := binary.BigEndian.AppendUint64(nil, uint64(u))
	must(t, p.prod.Produce(dstTopic, 0, nil, rec.Value(), []kafkafake.Header{{Key: "src", Value: h}}, time.Time{}, u))
}

// check asserts what the tracker claims against the logs.
func (p *pipeline) check(t *rapid.T) {
	cur, ok := p.tr.Last()
	if !ok {
		return
	}
	p.checkRange(t, cur)
	if p.hadPrev {
		backwards := cur.SourceEnd < p.prev.SourceEnd || cur.SourceNext < p.prev.SourceNext
		newRewind := cur.Rewind && !(p.prev.Rewind && p.prev.SourceStart == cur.SourceStart && p.prev.TargetStart == cur.TargetStart)
		if backwards && !cur.Rewind {
			t.Fatalf("the map moved backwards without marking the range a rewind: %+v after %+v", cur, p.prev)
		}
		if newRewind && !p.rewound {
			t.Fatalf("the map rewound without a rewind through the offsets API: %+v after %+v", cur, p.prev)
		}
		if newRewind {
			p.rewound = false
		}
	}
	p.prev, p.hadPrev = cur, true
}

// checkRange asserts one range's claims: each of its source offsets was acknowledged at its target offset (the
// target holds a copy of that record there), no source record lies in (SourceEnd, SourceNext), and none in the
// GapBefore offsets before it.
func (p *pipeline) checkRange(t *rapid.T, r offsetmap.Range) {
	copies := p.copies(t)
	for u := r.SourceStart; u <= r.SourceEnd; u++ {
		d := r.TargetStart + (u - r.SourceStart)
		if got, ok := copies[d]; !ok || got != u {
			t.Fatalf("range %+v claims source %d at target %d, which holds %d (present: %v)", r, u, d, got, ok)
		}
	}
	for u := range p.records(t) {
		if u > r.SourceEnd && u < r.SourceNext {
			t.Fatalf("range %+v claims no source record up to %d, but %d is one", r, r.SourceNext, u)
		}
		if u >= r.SourceStart-r.GapBefore && u < r.SourceStart {
			t.Fatalf("range %+v claims no source record in the %d offsets before it, but %d is one", r, r.GapBefore, u)
		}
	}
}

// copies maps each target offset to the source offset of the record written there.
func (p *pipeline) copies(t *rapid.T) map[int64]int64 {
	es, err := p.tgt.Entries(dstTopic, 0)
	must(t, err)
	out := map[int64]int64{}
	for _, e := range es {
		if !e.Marker {
			out[e.Offset] = int64(binary.BigEndian.Uint64(e.Message.Headers[0].Value))
		}
	}
	return out
}

// records returns the source offsets of the records the consumer returns.
func (p *pipeline) records(t *rapid.T) map[int64]bool {
	es, err := p.src.Entries(srcTopic, 0)
	must(t, err)
	out := map[int64]bool{}
	for _, e := range es {
		if !e.Marker && (!p.rc || !e.Aborted) {
			out[e.Offset] = true
		}
	}
	return out
}

// TestTrackerClaimsOnlyWhatTheTargetAcknowledged runs random pipelines against random fault schedules: every
// range the tracker holds or hands to be persisted maps only records the target acknowledged at exactly those
// offsets, claims no skipped source record, and never moves backwards unless the offsets API rewound it.
func TestTrackerClaimsOnlyWhatTheTargetAcknowledged(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		p := newPipeline(t)
		t.Repeat(map[string]func(*rapid.T){
			"append": p.appendSource,
			"poll": func(t *rapid.T) {
				for range rapid.IntRange(1, 4).Draw(t, "polls") {
					p.poll(t)
				}
			},
			"deliver": func(t *rapid.T) {
				for range rapid.IntRange(1, 3).Draw(t, "deliveries") {
					p.prod.Deliver(1)
					p.check(t) // each acknowledgement may begin a range: none may pass unchecked
				}
			},
			"faults": func(t *rapid.T) {
				p.faults = append(p.faults, rapid.SliceOfN(rapid.SampledFrom([]kafkafake.Fault{
					kafkafake.Accept, kafkafake.Refuse, kafkafake.DropAck, kafkafake.Unconfirmed, kafkafake.Delay,
					kafkafake.TooLarge, kafkafake.GoFatal,
				}), 1, 4).Draw(t, "faults")...)
			},
			"release": func(*rapid.T) { p.tgt.Release() },
			"persist": func(t *rapid.T) {
				s := p.tr.Take()
				for _, r := range s.Ranges {
					p.checkRange(t, r)
				}
				p.tr.Persisted(s)
			},
			"restart": func(t *rapid.T) { // a failed or fatal pipeline starts over from what was acknowledged
				p.stop(t)
				p.start(t, p.acked+1)
			},
			"rewind": func(t *rapid.T) { // the offsets API moves the stopped partition back
				if p.acked < 0 {
					return
				}
				p.stop(t)
				p.acked = rapid.Int64Range(-1, p.acked).Draw(t, "rewind to")
				p.rewound = true
				p.start(t, p.acked+1)
			},
			"": p.check,
		})
	})
}

func (p *pipeline) String() string { return fmt.Sprintf("acked %d, in flight %v", p.acked, p.inflight) }
