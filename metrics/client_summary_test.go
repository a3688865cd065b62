package metrics

import (
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
