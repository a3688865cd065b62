package source

import (
	"testing"
	"time"

	"github.com/kmirror/kmirror/metrics"
)

// BenchmarkRecordBookkeeping is what a source task adds per record besides the clients' own work: the
// partition's bookkeeping on forward and acknowledgement, without metrics and with them (the registry's
// Fetched and AckedSize). Records go through in batches of 1,000 in flight, as they do under load.
func BenchmarkRecordBookkeeping(b *testing.B) {
	for _, c := range []struct {
		name string
		on   bool
	}{{"metrics=off", false}, {"metrics=on", true}} {
		b.Run(c.name, func(b *testing.B) {
			p := newSourcePartition(testTP, "A.orders", -1, "")
			if c.on {
				p.metrics = partitionMetrics{metrics.New().SourcePartition(metrics.PartitionLabels{
					Connector: "mm2", SourceAlias: "A", TargetAlias: "B", Topic: testTP.Topic, RemoteTopic: "A.orders", Partition: testTP.Partition})}
			}
			ts := time.Now().Add(-time.Second)
			const batch = 1000
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				n := min(batch, b.N-i)
				for j := range n {
					p.forwarded(int64(i+j), unixMilli(ts), 120, 100)
					p.metrics.fetched(100, ts)
				}
				now := time.Now() // one reading per burst of reports, as kafka.Producer takes it
				for j := range n {
					if acked, rec, _, _ := p.ack(int64(i + j)); acked {
						p.metrics.acked(rec.ts, rec.size, now)
					}
				}
			}
		})
	}
}
