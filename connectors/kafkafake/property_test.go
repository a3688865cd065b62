package kafkafake_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/kafkafake"
)

// TestDeliveriesKeepOrderAndTellTheTruth produces to three partitions under random faults, purges and
// releases: every record gets exactly one delivery report, reports come in produce order per partition, a
// report with an offset names the record written there, and the target holds exactly the records whose
// fault writes them.
func TestDeliveriesKeepOrderAndTellTheTruth(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		tg := kafkafake.NewTarget()
		if _, err := tg.CreateTopic("r", 3); err != nil {
			t.Fatal(err)
		}
		var plan []kafkafake.Fault
		tg.SetFaults(func(kafkafake.Attempt) kafkafake.Fault {
			if len(plan) == 0 {
				return kafkafake.Accept
			}
			f := plan[0]
			plan = plan[1:]
			return f
		})
		produced := map[string]int32{}
		var order [3][]string // values per partition, in produce order
		reported := map[string]kafkafake.Delivery{}
		var next [3]int // per partition: index in order of the next report expected
		writes := map[string]bool{}
		p := tg.NewProducer(func(d kafkafake.Delivery) {
			v := d.Opaque.(string)
			if _, dup := reported[v]; dup {
				t.Fatalf("%s reported twice", v)
			}
			reported[v] = d
			if want := order[d.Partition][next[d.Partition]]; want != v {
				t.Fatalf("partition %d reported %s, want %s first", d.Partition, v, want)
			}
			next[d.Partition]++
			if d.Err == nil && !d.Unconfirmed {
				writes[v] = true
				es, err := tg.Entries("r", d.Partition)
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, e := range es {
					found = found || e.Offset == d.Offset && string(e.Message.Value) == v
				}
				if !found {
					t.Fatalf("%s reported at offset %d, which holds another record", v, d.Offset)
				}
			}
		}, kafkafake.ProducerOptions{Manual: true})
		defer p.Close()
		t.Repeat(map[string]func(*rapid.T){
			"produce": func(t *rapid.T) {
				part := rapid.Int32Range(0, 2).Draw(t, "partition")
				v := fmt.Sprintf("v%d", len(produced))
				if err := p.Produce("r", part, nil, []byte(v), nil, time.Time{}, v); err != nil {
					return // a fatal producer refuses more
				}
				produced[v] = part
				order[part] = append(order[part], v)
			},
			"faults": func(t *rapid.T) {
				plan = append(plan, rapid.SliceOfN(rapid.SampledFrom([]kafkafake.Fault{kafkafake.Accept, kafkafake.Refuse,
					kafkafake.TooLarge, kafkafake.Delay, kafkafake.DropAck, kafkafake.Unconfirmed, kafkafake.GoFatal,
					kafkafake.AuthFail}), 1, 3).Draw(t, "plan")...)
			},
			"deliver": func(t *rapid.T) { p.Deliver(rapid.IntRange(1, 4).Draw(t, "n")) },
			"release": func(*rapid.T) { tg.Release() },
			"purge":   func(t *rapid.T) { _ = p.Purge(rapid.Bool().Draw(t, "in flight")) },
			"": func(t *rapid.T) {
				if got, want := p.Outstanding(), len(produced)-len(reported); got != want {
					t.Fatalf("%d outstanding, %d produced and %d reported", got, len(produced), len(reported))
				}
			},
		})
		_ = p.Purge(true)
		tg.Release()
		if left := p.Flush(context.Background()); left != 0 {
			t.Fatalf("%d records left after a purge", left)
		}
		if len(reported) != len(produced) {
			t.Fatalf("%d of %d records reported", len(reported), len(produced))
		}
		var written int
		for part := range int32(3) {
			es, err := tg.Entries("r", part)
			if err != nil {
				t.Fatal(err)
			}
			written += len(es)
		}
		unconfirmedOrLost := 0
		for v, d := range reported {
			if !writes[v] && (d.Unconfirmed || d.Err == kafkafake.ErrTimedOut) {
				unconfirmedOrLost++ // written or not: a refusal and a lost acknowledgement report alike
			}
		}
		if written < len(writes) || written > len(writes)+unconfirmedOrLost {
			t.Fatalf("the target holds %d records; %d reported written, %d more may be", written, len(writes), unconfirmedOrLost)
		}
	})
}
