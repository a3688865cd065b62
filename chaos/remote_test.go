package chaos

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// remoteRecord is what the audit needs of a record on B (or on A, to compare A with what it acknowledged).
type remoteRecord struct {
	offset     int64
	gen, seq   int
	parsed     bool
	producerID int64
	epoch      int16
	seen       time.Time // when the tailer read it
}

// remoteTailer reads every partition of the remote topic on B from its start, for the whole test, with
// franz-go: unlike librdkafka it shows each record batch's producer id, which the stale-write check needs.
// The source-broker case also reads A's source topic with one, to tell what A itself lost.
type remoteTailer struct {
	t          *testing.T
	cluster    string // "A" or "B"
	topic      string
	partitions int
	committed  bool // reads with read_committed (exactly-once cases): aborted records are not seen
	cl         *kgo.Client
	cancel     context.CancelFunc
	done       chan struct{}

	mu      sync.Mutex
	records [][]remoteRecord // partition -> records in offset order
	reached []int64          // partition -> the highest offset read, transaction markers included; -1 none
	seen    map[int][][]bool // generation -> partition -> sequence -> seen at least once
	errs    map[string]int   // fetch errors by text, for the report when something never arrives
}

// tailRemote starts reading topic (which must exist on B) and stops when the test ends.
func tailRemote(t *testing.T, topic string, partitions int) *remoteTailer {
	t.Helper()
	return tailTopic(t, "B", topic, partitions)
}

// tailRemoteCommitted is tailRemote with read_committed, as a downstream consumer of exactly-once replication
// reads: records of aborted transactions are skipped, and open transactions hold the reader back.
func tailRemoteCommitted(t *testing.T, topic string, partitions int) *remoteTailer {
	t.Helper()
	return tailTopicWith(t, "B", topic, partitions, true)
}

// tailTopic starts reading topic (which must exist on cluster) and stops when the test ends.
func tailTopic(t *testing.T, cluster, topic string, partitions int) *remoteTailer {
	t.Helper()
	return tailTopicWith(t, cluster, topic, partitions, false)
}

func tailTopicWith(t *testing.T, cluster, topic string, partitions int, committed bool) *remoteTailer {
	t.Helper()
	awaitPartitions(t, cluster, topic, partitions)
	starts := map[int32]kgo.Offset{}
	for p := range partitions {
		starts[int32(p)] = kgo.NewOffset().AtStart()
	}
	opts := []kgo.Opt{
		kgo.SeedBrokers(kafkatest.Bootstrap(t, cluster)),
		kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: starts}),
		kgo.FetchIsolationLevel(kgo.ReadUncommitted()),
		kgo.FetchMaxWait(100 * time.Millisecond),
		kgo.RetryTimeout(time.Hour), // the cluster may be down for a while: keep trying
		// Transaction markers are kept so that the reader knows how far it has read: in a topic written in
		// transactions the last offset below the end is a commit or abort marker, which holds no record.
		kgo.KeepControlRecords(),
	}
	if committed {
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		t.Fatalf("create the franz-go reader of %s: %v", cluster, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	rt := &remoteTailer{t: t, cluster: cluster, topic: topic, partitions: partitions, committed: committed, cl: cl, cancel: cancel, done: make(chan struct{}),
		records: make([][]remoteRecord, partitions), reached: make([]int64, partitions), seen: map[int][][]bool{}, errs: map[string]int{}}
	for p := range rt.reached {
		rt.reached[p] = -1
	}
	go rt.run(ctx)
	t.Cleanup(rt.close)
	return rt
}

func (rt *remoteTailer) close() {
	rt.cancel()
	<-rt.done
	rt.cl.Close()
}

func (rt *remoteTailer) run(ctx context.Context) {
	defer close(rt.done)
	for ctx.Err() == nil {
		fetches := rt.cl.PollFetches(ctx)
		now := time.Now()
		rt.mu.Lock()
		fetches.EachError(func(topic string, p int32, err error) {
			if ctx.Err() == nil {
				rt.errs[fmt.Sprintf("%s [%d]: %v", topic, p, err)]++
			}
		})
		fetches.EachRecord(func(r *kgo.Record) {
			rt.reached[r.Partition] = max(rt.reached[r.Partition], r.Offset)
			if r.Attrs.IsControl() {
				return
			}
			rr := remoteRecord{offset: r.Offset, producerID: r.ProducerID, epoch: r.ProducerEpoch, seen: now}
			rr.gen, rr.seq, rr.parsed = parseValue(r.Value)
			rt.records[r.Partition] = append(rt.records[r.Partition], rr)
			if rr.parsed {
				rt.markSeen(rr.gen, int(r.Partition), rr.seq)
			}
		})
		rt.mu.Unlock()
	}
}

func (rt *remoteTailer) markSeen(gen, p, seq int) {
	byPart := rt.seen[gen]
	if byPart == nil {
		byPart = make([][]bool, rt.partitions)
		rt.seen[gen] = byPart
	}
	for len(byPart[p]) <= seq {
		byPart[p] = append(byPart[p], false)
	}
	byPart[p][seq] = true
}

// parseValue reads "gen=G seq=S ..." (the sequenced producer's values).
func parseValue(v []byte) (gen, seq int, ok bool) {
	rest, ok := bytes.CutPrefix(v, []byte("gen="))
	if !ok {
		return 0, 0, false
	}
	g, rest, ok := bytes.Cut(rest, []byte(" seq="))
	if !ok {
		return 0, 0, false
	}
	s, _, _ := bytes.Cut(rest, []byte(" "))
	gen, err1 := strconv.Atoi(string(g))
	seq, err2 := strconv.Atoi(string(s))
	return gen, seq, err1 == nil && err2 == nil
}

// missing counts the sequences of e that are required and not seen on B yet.
func (rt *remoteTailer) missing(e *expected) int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	n := 0
	for p := range e.offsets {
		var seen []bool
		if byPart := rt.seen[e.gen]; byPart != nil {
			seen = byPart[p]
		}
		for seq := range e.offsets[p] {
			if e.required(p, seq) && (seq >= len(seen) || !seen[seq]) {
				n++
			}
		}
	}
	return n
}

// awaitCaughtUp waits until B holds every sequence the generations require ("caught up"), and returns how
// long that took, or an error naming what is still missing at the deadline.
func (rt *remoteTailer) awaitCaughtUp(within time.Duration, exps ...*expected) (time.Duration, error) {
	start := time.Now()
	deadline := start.Add(within)
	for {
		total := 0
		var parts []string
		for _, e := range exps {
			n := rt.missing(e)
			total += n
			parts = append(parts, fmt.Sprintf("gen %d: %d", e.gen, n))
		}
		if total == 0 {
			return time.Since(start), nil
		}
		if time.Now().After(deadline) {
			return time.Since(start), fmt.Errorf("not caught up within %s: missing %v; reader errors: %v", within, parts, rt.fetchErrors())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (rt *remoteTailer) fetchErrors() map[string]int {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	out := make(map[string]int, len(rt.errs))
	for k, v := range rt.errs {
		out[k] = v
	}
	return out
}

// awaitPast waits until every partition of B holds a record of generation gen with a sequence at least
// mark[p] (a record produced after the moment mark was taken), and returns, per partition, when the first
// such record was read.
func (rt *remoteTailer) awaitPast(gen int, mark []int, within time.Duration) ([]time.Time, error) {
	deadline := time.Now().Add(within)
	at := make([]time.Time, rt.partitions)
	next := make([]int, rt.partitions)
	for {
		rt.mu.Lock()
		var pending []int
		for p := range rt.partitions {
			for ; at[p].IsZero() && next[p] < len(rt.records[p]); next[p]++ {
				r := rt.records[p][next[p]]
				if r.parsed && r.gen == gen && r.seq >= mark[p] {
					at[p] = r.seen
				}
			}
			if at[p].IsZero() {
				pending = append(pending, p)
			}
		}
		rt.mu.Unlock()
		if len(pending) == 0 {
			return at, nil
		}
		if time.Now().After(deadline) {
			return at, fmt.Errorf("%d of %d partitions of %s (%v) got no record produced after the mark within %s", len(pending), rt.partitions, rt.topic, pending, within)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// snapshot waits until the reader has read every partition up to the end offset it has now, and returns a
// copy of every record read.
func (rt *remoteTailer) snapshot(within time.Duration) ([][]remoteRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var ends []int64
	var err error
	for {
		if ends, err = rt.endOffsets(ctx); err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("end offsets of %s on %s: %w", rt.topic, rt.cluster, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	for {
		rt.mu.Lock()
		complete := true
		for p, end := range ends {
			if end > 0 && rt.reached[p] < end-1 {
				complete = false
			}
		}
		if complete {
			out := make([][]remoteRecord, rt.partitions)
			for p, rs := range rt.records {
				out[p] = append([]remoteRecord(nil), rs...)
			}
			rt.mu.Unlock()
			return out, nil
		}
		rt.mu.Unlock()
		if ctx.Err() != nil {
			return nil, fmt.Errorf("reading %s on %s up to %v: not done within %s; reader errors: %v", rt.topic, rt.cluster, ends, within, rt.fetchErrors())
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// endOffsets lists the partitions' end offsets (high watermarks) on the tailer's cluster.
func (rt *remoteTailer) endOffsets(ctx context.Context) ([]int64, error) {
	req := kmsg.NewPtrListOffsetsRequest()
	req.ReplicaID = -1
	if rt.committed {
		req.IsolationLevel = 1 // the last stable offset: what a read_committed reader can reach
	}
	topic := kmsg.NewListOffsetsRequestTopic()
	topic.Topic = rt.topic
	for p := range rt.partitions {
		part := kmsg.NewListOffsetsRequestTopicPartition()
		part.Partition = int32(p)
		part.Timestamp = -1 // latest
		topic.Partitions = append(topic.Partitions, part)
	}
	req.Topics = append(req.Topics, topic)
	resp, err := req.RequestWith(ctx, rt.cl)
	if err != nil {
		return nil, err
	}
	ends := make([]int64, rt.partitions)
	got := 0
	for _, tp := range resp.Topics {
		for _, p := range tp.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return nil, fmt.Errorf("partition %d: %w", p.Partition, err)
			}
			ends[p.Partition] = p.Offset
			got++
		}
	}
	if got != rt.partitions {
		return nil, fmt.Errorf("got end offsets of %d of %d partitions", got, rt.partitions)
	}
	return ends, nil
}
