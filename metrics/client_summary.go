package metrics

import (
	"encoding/json"
	"fmt"
	"unsafe"
)

// ClientSummary is what capacity advice needs of a librdkafka statistics document: how full the producer's
// batches are, and how the brokers answer. Zero values mean "not measured in this interval" (no batch sent, no
// request answered).
type ClientSummary struct {
	// BatchAvgBytes and BatchAvgRecords are the mean size of the batches (MessageSets) the producer sent over
	// the interval, weighted by the number of batches per topic.
	BatchAvgBytes   float64
	BatchAvgRecords float64
	Batches         int64
	// RTTAvgMs is the highest of the brokers' average round-trip times: the slowest broker paces the partitions
	// it leads.
	RTTAvgMs float64
	// ThrottleAvgMs is the highest of the brokers' average throttle times (quotas).
	ThrottleAvgMs float64
	// InFlightRequests counts the requests sent and awaiting a response, over all brokers; InFlightMax is the
	// most awaiting at one broker.
	InFlightRequests int64
	InFlightMax      int64
	Brokers          int
}

// ClientDoc is a parsed librdkafka statistics document (STATISTICS.md). The document has an entry per
// partition, so parsing is most of what it costs (megabytes per document at a thousand partitions per client):
// one parse serves both the registry (Registry.ClientDoc) and the summary (SummarizeDoc).
type ClientDoc struct{ st rdStats }

// ParseClientStats parses a librdkafka statistics document.
func ParseClientStats(statsJSON string) (*ClientDoc, error) {
	var d ClientDoc
	// Decoded in place rather than from a copy: Unmarshal neither changes its input nor keeps any of it (every
	// string it stores is its own), and the C path hands over librdkafka's buffer this way.
	if err := json.Unmarshal(unsafe.Slice(unsafe.StringData(statsJSON), len(statsJSON)), &d.st); err != nil {
		return nil, fmt.Errorf("parse librdkafka statistics: %w", err)
	}
	return &d, nil
}

// SummarizeClient reads a librdkafka statistics document (STATISTICS.md).
func SummarizeClient(statsJSON string) (ClientSummary, error) {
	d, err := ParseClientStats(statsJSON)
	if err != nil {
		return ClientSummary{}, err
	}
	return SummarizeDoc(d), nil
}

// SummarizeDoc summarizes a parsed statistics document; it does not change d.
func SummarizeDoc(d *ClientDoc) ClientSummary {
	st := &d.st
	var s ClientSummary
	var bytes, records float64
	for _, t := range st.Topics {
		if t.BatchSize.Cnt <= 0 {
			continue
		}
		s.Batches += t.BatchSize.Cnt
		bytes += float64(t.BatchSize.Avg * t.BatchSize.Cnt)
		records += float64(t.BatchCnt.Avg * t.BatchCnt.Cnt)
	}
	if s.Batches > 0 {
		s.BatchAvgBytes, s.BatchAvgRecords = bytes/float64(s.Batches), records/float64(s.Batches)
	}
	for _, b := range st.Brokers {
		if b.Source == "internal" || b.Source == "logical" {
			continue
		}
		s.Brokers++
		if b.RTT.Cnt > 0 {
			s.RTTAvgMs = max(s.RTTAvgMs, float64(b.RTT.Avg)/1e3)
		}
		if b.Throttle.Cnt > 0 {
			s.ThrottleAvgMs = max(s.ThrottleAvgMs, float64(b.Throttle.Avg))
		}
		s.InFlightRequests += b.WaitResp
		s.InFlightMax = max(s.InFlightMax, b.WaitResp)
	}
	return s
}
