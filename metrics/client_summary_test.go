package metrics

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSummarizeClient(t *testing.T) {
	t.Parallel()
	// Parts of a librdkafka 2.11 producer statistics document (STATISTICS.md).
	doc := `{"type":"producer","brokers":{
		"127.0.0.1:9092/1":{"nodeid":1,"source":"learned","waitresp_cnt":3,"rtt":{"avg":2500,"cnt":10},"throttle":{"avg":0,"cnt":10}},
		"127.0.0.1:9093/2":{"nodeid":2,"source":"learned","waitresp_cnt":5,"rtt":{"avg":48000,"cnt":4},"throttle":{"avg":12,"cnt":4}},
		"GroupCoordinator":{"nodeid":-1,"source":"logical","waitresp_cnt":9,"rtt":{"avg":999000,"cnt":1}}},
		"topics":{"a":{"batchsize":{"avg":10000,"cnt":30},"batchcnt":{"avg":10,"cnt":30}},
		          "b":{"batchsize":{"avg":50000,"cnt":10},"batchcnt":{"avg":50,"cnt":10}},
		          "idle":{"batchsize":{"avg":0,"cnt":0},"batchcnt":{"avg":0,"cnt":0}}}}`
	s, err := SummarizeClient(doc)
	require.NoError(t, err)
	require.Equal(t, ClientSummary{
		BatchAvgBytes: 20000, BatchAvgRecords: 20, Batches: 40, // weighted by batches: (30×10000 + 10×50000) / 40
		RTTAvgMs: 48, ThrottleAvgMs: 12, InFlightRequests: 8, InFlightMax: 5, Brokers: 2,
	}, s, "logical brokers are not brokers")

	_, err = SummarizeClient("{not json")
	require.Error(t, err)
}

// TestClientDocServesBoth: one parsed document feeds the registry and the summary, in either order, with the
// same results as parsing it for each.
func TestClientDocServesBoth(t *testing.T) {
	t.Parallel()
	want, err := SummarizeClient(producerStats)
	require.NoError(t, err)
	d, err := ParseClientStats(producerStats)
	require.NoError(t, err)
	r := New()
	r.ClientDoc(ClientLabels{Connector: "c", Role: "replication-producer", ClientID: "p"}, d)
	require.Equal(t, want, SummarizeDoc(d), "the registry left the document as it was")
	require.Len(t, d.st.Brokers, len(mustParse(t, producerStats).st.Brokers))
	_, err = ParseClientStats("{not json")
	require.Error(t, err)
}

func mustParse(t *testing.T, doc string) *ClientDoc {
	d, err := ParseClientStats(doc)
	require.NoError(t, err)
	return d
}

// consumerDoc returns a consumer statistics document shaped like librdkafka's: topics × partitions entries with
// the fields librdkafka writes for each (most of them ignored by the parse).
func consumerDoc(topics, partitions int) string {
	var b strings.Builder
	b.WriteString(`{"name":"c#consumer-1","type":"consumer","msg_cnt":0,"msg_size":0,"tx_bytes":1,"rx_bytes":2,"brokers":{},"topics":{`)
	for t := range topics {
		if t > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"topic-%d":{"topic":"topic-%d","age":1000,"metadata_age":900,`+
			`"batchsize":{"min":0,"max":0,"avg":0,"sum":0,"cnt":0,"p99":0},"batchcnt":{"min":0,"max":0,"avg":0,"sum":0,"cnt":0,"p99":0},"partitions":{`, t, t)
		for p := range partitions {
			if p > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%d":{"partition":%d,"broker":1,"leader":1,"desired":true,"unknown":false,"msgq_cnt":0,`+
				`"msgq_bytes":0,"xmit_msgq_cnt":0,"xmit_msgq_bytes":0,"fetchq_cnt":0,"fetchq_size":0,"fetch_state":"active",`+
				`"query_offset":-1001,"next_offset":10,"app_offset":10,"stored_offset":-1001,"stored_leader_epoch":-1,`+
				`"commited_offset":-1001,"committed_offset":-1001,"committed_leader_epoch":-1,"eof_offset":10,"lo_offset":0,`+
				`"hi_offset":12,"ls_offset":12,"consumer_lag":-1,"consumer_lag_stored":-1,"leader_epoch":0,"txmsgs":0,`+
				`"txbytes":0,"rxmsgs":10,"rxbytes":10240,"msgs":10,"rx_ver_drops":0,"msgs_inflight":0,"next_ack_seq":0,`+
				`"next_err_seq":0,"acked_msgid":0}`, p, p)
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`}}`)
	return b.String()
}

// The document has an entry per partition of every topic the client knows — at a thousand partitions over
// round-robin tasks, about a megabyte per client per interval — so what a parse allocates beside what it keeps
// is what the statistics cost the Go heap.
func BenchmarkParseClientStats1000Partitions(b *testing.B) {
	doc := consumerDoc(100, 10)
	b.SetBytes(int64(len(doc)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseClientStats(doc); err != nil {
			b.Fatal(err)
		}
	}
}
