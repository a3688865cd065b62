package cpath_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/cpath"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/provenance"
)

// TestProvenanceDecidesAsTheGoGuard: the C path stamps, keeps and skips exactly the records package
// provenance's Guard says, and reports its skips in consumption order with the forwarded records.
func TestProvenanceDecidesAsTheGoGuard(t *testing.T) {
	t.Parallel()
	h := provenance.Header
	cases := [][]kafka.Header{
		nil,
		{{Key: "other", Value: []byte("x")}},
		{{Key: h, Value: []byte("B@idb")}},
		{{Key: h, Value: []byte("B@")}},
		{{Key: h, Value: []byte("renamed@idb")}},
		{{Key: h, Value: []byte("B@idc")}},
		{{Key: h, Value: []byte("A@ida")}},
		{{Key: h, Value: []byte("garbage")}},
		{{Key: h, Value: nil}},
		{{Key: h, Value: []byte("B@idb")}, {Key: h, Value: []byte("C@idc")}}, // the last one counts
		{{Key: h, Value: []byte("C@idc")}, {Key: h, Value: []byte("B@idb")}},
		{{Key: h, Value: []byte("a@b@")}},
	}
	guard := provenance.NewGuard(provenance.Origin{Alias: "A", ClusterID: "ida"}, provenance.Origin{Alias: "B", ClusterID: "idb"})
	// The same cases with a target whose id is unknown: by alias.
	byAlias := provenance.NewGuard(provenance.Origin{Alias: "A"}, provenance.Origin{Alias: "B"})
	for name, g := range map[string]*provenance.Guard{"ByID": guard, "ByAlias": byAlias} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			provenanceCase(t, g, cases)
		})
	}
}

func provenanceCase(t *testing.T, g *provenance.Guard, cases [][]kafka.Header) {
	const rounds = 50
	src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
	kafkatest.CreateTopic(t, "A", src, 1, nil)
	kafkatest.CreateTopic(t, "B", dst, 1, nil)
	var recs []kafkatest.Record
	var want []kafkatest.Record // what B must hold
	var skips []int64
	for i := range rounds * len(cases) {
		hs := cases[i%len(cases)]
		r := kafkatest.Record{Topic: src, Value: fmt.Appendf(nil, "v-%d", i), Headers: hs}
		recs = append(recs, r)
		var v []byte
		present := false
		for _, x := range hs {
			if x.Key == provenance.Header {
				v, present = x.Value, true
			}
		}
		switch g.Decide(v, present) {
		case provenance.Skip:
			skips = append(skips, int64(i))
			continue
		case provenance.Stamp:
			r.Headers = append(append([]kafka.Header(nil), hs...), kafka.Header{Key: provenance.Header, Value: g.Stamp()})
		}
		want = append(want, r)
	}
	kafkatest.Produce(t, "A", recs)

	pl := pipeline(t, []cpath.Part{{Topic: src, Partition: 0, Remote: dst}}, 0, nil)
	target := g.Target()
	pl.SetProvenance(provenance.Header, g.Stamp(), target.Alias, target.ClusterID)
	assignFromBeginning(t, pl, 1)
	l := newLedger()
	var skipped []int64
	last := int64(-1) // the last offset of the entries so far: they come in consumption order
	runWith(t, pl, l, func() bool { return len(l.acked[0])+len(skipped) == len(recs) }, func() *cpath.Batch {
		b := pl.Step(10*time.Millisecond, cpath.MaxBatch)
		for _, f := range b.Forwarded {
			if f.Records > 0 && f.Skipped > 0 {
				t.Fatalf("entry %+v both forwards and skips", f)
			}
			if f.Records == 0 && f.Skipped == 0 {
				continue
			}
			if f.First <= last || f.Last < f.First || f.Next != f.Last+1 {
				t.Fatalf("entry %+v out of order after offset %d", f, last)
			}
			last = f.Last
			if f.Skipped > 0 {
				// The topic has no gaps: the skips of one entry are every record from First to Last.
				if int64(f.Skipped) != f.Last-f.First+1 {
					t.Fatalf("skip entry %+v spans offsets of forwarded records", f)
				}
				for o := f.First; o <= f.Last; o++ {
					skipped = append(skipped, o)
				}
			}
		}
		return b
	})
	if fmt.Sprint(skipped) != fmt.Sprint(skips) {
		t.Fatalf("skipped %v, want %v", skipped, skips)
	}
	got := kafkatest.ReadAll(t, "B", dst, 0)
	if len(got) != len(want) {
		t.Fatalf("B holds %d records, want %d", len(got), len(want))
	}
	for i := range want {
		if string(got[i].Value) != string(want[i].Value) || fmt.Sprint(got[i].Headers) != fmt.Sprint(want[i].Headers) {
			t.Fatalf("record %d on B: %q %v, want %q %v", i, got[i].Value, got[i].Headers, want[i].Value, want[i].Headers)
		}
	}
}
