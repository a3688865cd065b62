package kafkafake_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafkafake"
)

// TestMethodsMatchTheKafkaWrappers keeps the fake's method sets those of connectors/kafka, signature for
// signature (with the fake's value types for kafka's), so that an interface over the wrappers fits the fake.
func TestMethodsMatchTheKafkaWrappers(t *testing.T) {
	pairs := []struct {
		real, fake any
		methods    []string
	}{
		{(*kafka.Consumer)(nil), (*kafkafake.Consumer)(nil),
			[]string{"Assign", "Seek", "Watermarks", "CachedWatermarks", "Position", "Poll", "Close", "Admin"}},
		{(*kafka.Producer)(nil), (*kafkafake.Producer)(nil),
			[]string{"Produce", "Forward", "Flush", "Purge", "Outstanding", "Fatal", "AuthFailure", "Close", "Admin",
				"InitTransactions", "BeginTransaction", "CommitTransaction", "AbortTransaction"}},
		{(*kafka.Admin)(nil), (*kafkafake.Admin)(nil),
			[]string{"TopicIDs", "TopicShapes", "LogOffsets", "PartitionCount", "AuthFailure", "Close"}},
		{kafka.Record{}, kafkafake.Record{},
			[]string{"Topic", "Partition", "Offset", "Key", "Value", "Timestamp", "Size", "Headers"}},
	}
	for _, p := range pairs {
		rt, ft := reflect.TypeOf(p.real), reflect.TypeOf(p.fake)
		for _, name := range p.methods {
			rm, ok := rt.MethodByName(name)
			if !ok {
				t.Errorf("%s has no method %s: update the list", rt, name)
				continue
			}
			fm, ok := ft.MethodByName(name)
			if !ok {
				t.Errorf("%s has no method %s", ft, name)
				continue
			}
			want := strings.ReplaceAll(signature(rm.Type), "kafka.", "kafkafake.")
			if got := signature(fm.Type); got != want {
				t.Errorf("%s.%s is %s, want %s", ft, name, got, want)
			}
		}
	}
}

// signature renders a method's type without its receiver.
func signature(f reflect.Type) string {
	var in, out []string
	for i := 1; i < f.NumIn(); i++ {
		in = append(in, f.In(i).String())
	}
	for i := range f.NumOut() {
		out = append(out, f.Out(i).String())
	}
	return "func(" + strings.Join(in, ", ") + ") (" + strings.Join(out, ", ") + ")"
}
