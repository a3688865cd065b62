package source

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// statsOf feeds samples of (pos, lag) one second apart, with acks and bytes growing by the position.
func statsOf(samples ...[2]int64) *partitionStats {
	var s partitionStats
	at := time.Unix(1_700_000_000, 0)
	for i, x := range samples {
		s.add(lagSample{at: at.Add(time.Duration(i) * time.Second), pos: x[0], lag: x[1], acks: uint64(x[0]), bytes: 10 * uint64(x[0])})
	}
	return &s
}

// window repeats a step function over a full window: pos(i), lag(i).
func window(pos, lag func(i int64) int64) [][2]int64 {
	out := make([][2]int64, statusWindow)
	for i := range out {
		out[i] = [2]int64{pos(int64(i)), lag(int64(i))}
	}
	return out
}

func TestPartitionStatusFollowsBurrowsRules(t *testing.T) {
	cases := []struct {
		name    string
		samples [][2]int64
		lost    bool
		want    string
	}{
		{"no samples", nil, false, statusOK},
		{"caught up once in the window", append(window(func(int64) int64 { return 5 }, func(int64) int64 { return 7 })[1:], [2]int64{5, 0}), false, statusOK},
		{"idle and caught up", window(func(int64) int64 { return 5 }, func(int64) int64 { return 0 }), false, statusOK},
		{"not moving with records waiting", window(func(int64) int64 { return 5 }, func(i int64) int64 { return 3 + i }), false, statusStall},
		{"not moving, too early to say", window(func(int64) int64 { return 5 }, func(int64) int64 { return 3 })[:statusWindow-1], false, statusOK},
		{"moving while the lag grows at every sample", window(func(i int64) int64 { return 100 * i }, func(i int64) int64 { return 10 + i }), false, statusWarn},
		{"moving, the lag grew but fell once", window(func(i int64) int64 { return 100 * i }, func(i int64) int64 { return 10 + i - 3*(i/5)*(i%5/4) }), false, statusOK},
		{"moving, the lag falls", window(func(i int64) int64 { return 100 * i }, func(i int64) int64 { return 100 - i }), false, statusOK},
		{"moving at a steady distance", window(func(i int64) int64 { return 100 * i }, func(int64) int64 { return 40 }), false, statusOK},
		{"position went back", [][2]int64{{50, 0}, {60, 0}, {0, 80}, {10, 70}}, false, statusRewind},
		{"lost records win", window(func(int64) int64 { return 5 }, func(int64) int64 { return 0 }), true, statusTruncated},
		{"end unknown", window(func(int64) int64 { return 5 }, func(int64) int64 { return -1 }), false, statusOK},
	}
	for _, c := range cases {
		if got := statsOf(c.samples...).status(c.lost); got != c.want {
			t.Errorf("%s: status %q, want %q (samples %v)", c.name, got, c.want, c.samples)
		}
	}
}

func TestPartitionStatusWindowSlides(t *testing.T) {
	s := statsOf(window(func(int64) int64 { return 5 }, func(int64) int64 { return 0 })...)
	at := time.Unix(1_800_000_000, 0)
	for i := range statusWindow - 1 {
		s.add(lagSample{at: at.Add(time.Duration(i) * time.Second), pos: 5, lag: 9})
		if got := s.status(false); got != statusOK {
			t.Fatalf("after %d stuck samples: %q, want ok while a caught-up sample is in the window", i+1, got)
		}
	}
	s.add(lagSample{at: at.Add(time.Hour), pos: 5, lag: 9})
	if got := s.status(false); got != statusStall {
		t.Fatalf("a window of stuck samples: %q, want stall", got)
	}
}

func TestPartitionRatesOverTheWindow(t *testing.T) {
	s := statsOf([2]int64{0, 0}, [2]int64{100, 0}, [2]int64{300, 0})
	records, bytes := s.rates()
	if records != 150 || bytes != 1500 {
		t.Fatalf("rates = %v records/s, %v bytes/s; want 150 and 1500", records, bytes)
	}
	if r, b := statsOf([2]int64{7, 0}).rates(); r != 0 || b != 0 {
		t.Fatalf("one sample: rates %v, %v; want 0", r, b)
	}
}

func TestReplicatedOffset(t *testing.T) {
	cases := []struct {
		name     string
		pp       partitionPosition
		low, end int64
		latest   bool
		want     int64
	}{
		{"past the last ack", partitionPosition{acked: 41, head: 42, readNext: -1}, 0, 100, false, 42},
		{"past markers once everything is acked", partitionPosition{acked: 41, head: -1, readNext: 44}, 0, 44, false, 44},
		{"not past markers while records are in flight", partitionPosition{acked: 41, head: 45, readNext: 44}, 0, 60, false, 42},
		{"not past markers after a failed delivery", partitionPosition{acked: 41, head: -1, readNext: 44, broken: true}, 0, 44, false, 42},
		{"first record in flight", partitionPosition{acked: -1, head: 17, readNext: -1}, 10, 30, false, 17},
		{"from the beginning, nothing fetched", partitionPosition{acked: -1, head: -1, readNext: -1}, 10, 30, false, 10},
		{"from the end, nothing fetched", partitionPosition{acked: -1, head: -1, readNext: -1}, 10, 30, true, 30},
		{"nothing known", partitionPosition{acked: -1, head: -1, readNext: -1}, -1, -1, false, 0},
	}
	for _, c := range cases {
		if got := c.pp.replicatedOffset(c.low, c.end, c.latest); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
}

// statsEnv records what a run publishes.
type statsEnv struct {
	tasks.TaskEnv
	published [][]kmtype.PartitionStat
}

func (e *statsEnv) PublishPartitionStats(_ context.Context, stats []kmtype.PartitionStat) error {
	e.published = append(e.published, stats)
	return nil
}

// TestQuietPartitionsArePublishedLessOften: a partition whose stats did not change is left out of a
// publication until sourceRepublishInterval has passed; one that moved is in every one.
func TestQuietPartitionsArePublishedLessOften(t *testing.T) {
	env := &statsEnv{}
	quiet := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 41, "")
	busy := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 1}, "A.t", 41, "")
	r := &sourceRun{env: env, parts: []*sourcePartition{quiet, busy}}
	names := func(stats []kmtype.PartitionStat) (out []int32) {
		for _, s := range stats {
			out = append(out, s.Partition)
		}
		return out
	}
	publish := func() []int32 {
		t.Helper()
		r.sampleStats(nil, time.Now())
		if err := r.publishStats(t.Context(), ""); err != nil {
			t.Fatal(err)
		}
		return names(env.published[len(env.published)-1])
	}
	if got := publish(); !slices.Equal(got, []int32{0, 1}) {
		t.Fatalf("first publication: partitions %v, want both", got)
	}
	busy.forwarded(42, 1_700_000_000_000, 10, 5)
	busy.ack(7)
	if got := publish(); !slices.Equal(got, []int32{1}) {
		t.Fatalf("after partition 1 moved: %v, want only 1", got)
	}
	quiet.stats.publishedAt = quiet.stats.publishedAt.Add(-sourceRepublishInterval)
	if got := publish(); !slices.Contains(got, 0) {
		t.Fatalf("once the interval passed: %v, want the quiet partition again", got)
	}
	if err := r.publishStats(t.Context(), statusStop); err != nil {
		t.Fatal(err)
	}
	final := env.published[len(env.published)-1]
	if len(final) != 2 || final[0].Status != statusStop || final[1].Status != statusStop || final[1].ReplicatedOffset != 43 {
		t.Fatalf("the final publication: %+v, want both partitions marked stop where they stand", final)
	}
}

// TestFinalPublicationNamesUnsampledPartitions: a run that ends before its committer's first sample (stopped
// within a second of its pipeline's start) still leaves a row for every partition it has a position of, marked
// stop, with the end offset last seen where there is one: the stop keeps only rows that exist, and a topic
// deleted while the connector is stopped is judged on them. A partition with no position at all is left out.
func TestFinalPublicationNamesUnsampledPartitions(t *testing.T) {
	env := &statsEnv{}
	committed := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 1026, "")
	committed.seenEnd = 6000
	fresh := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 1}, "A.t", -1, "")
	r := &sourceRun{env: env, parts: []*sourcePartition{committed, fresh}}
	if err := r.publishStats(t.Context(), ""); err != nil {
		t.Fatal(err)
	}
	if len(env.published) > 0 && len(env.published[0]) > 0 {
		t.Fatalf("a periodic publication before the first sample: %+v, want nothing", env.published[0])
	}
	if err := r.publishStats(t.Context(), statusStop); err != nil {
		t.Fatal(err)
	}
	final := env.published[len(env.published)-1]
	if len(final) != 1 {
		t.Fatalf("the final publication: %+v, want the committed partition only", final)
	}
	st := final[0]
	if st.Partition != 0 || st.Status != statusStop || st.ReplicatedOffset != 1027 || st.EndOffset == nil || *st.EndOffset != 6000 ||
		st.LagRecords == nil || *st.LagRecords != 6000-1027 {
		t.Fatalf("the final publication: %+v, want partition 0 stopped at 1027 with the end last seen, 6000", st)
	}
}

// countingReader answers cached watermarks (0, end) and counts the reads per partition.
type countingReader struct {
	end   int64
	reads map[int32]int
}

func (c *countingReader) Watermarks(string, int32, time.Duration) (int64, int64, error) {
	return 0, c.end, nil
}
func (c *countingReader) Seek(string, int32, int64) error { return nil }
func (c *countingReader) CachedWatermarks(_ string, p int32) (int64, int64, error) {
	c.reads[p]++
	return 0, c.end, nil
}

// A task with more partitions than sourceWatermarkSampleMax reads all their watermarks at its first sample,
// then that many a sample in turn; a partition not read keeps its last end, and every one sees a new end
// within ceil(partitions / max) samples.
func TestWatermarksAreSampledInTurnPastTheBudget(t *testing.T) {
	const n = 2*sourceWatermarkSampleMax + 100 // three samples to go round
	r := &sourceRun{env: &statsEnv{}}
	for p := range int32(n) {
		r.parts = append(r.parts, newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: p}, "A.t", -1, ""))
	}
	c := &countingReader{end: 10, reads: map[int32]int{}}
	total := func() (sum int) {
		for _, v := range c.reads {
			sum += v
		}
		return sum
	}
	r.sampleStats(c, time.Now())
	if total() != n || len(c.reads) != n {
		t.Fatalf("first sample read %d watermarks of %d partitions, want all %d", total(), len(c.reads), n)
	}
	c.end = 20
	for round := 1; round <= 3; round++ {
		before := total()
		r.sampleStats(c, time.Now())
		if got := total() - before; got != sourceWatermarkSampleMax {
			t.Fatalf("sample %d read %d watermarks, want %d", round, got, sourceWatermarkSampleMax)
		}
		fresh := 0
		for _, p := range r.parts {
			switch end := *p.stats.last.EndOffset; end {
			case 20:
				fresh++
			case 10:
			default:
				t.Fatalf("partition %d: end %d, want 10 (kept) or 20 (read)", p.tp.Partition, end)
			}
		}
		if want := min(round*sourceWatermarkSampleMax, n); fresh != want {
			t.Fatalf("after sample %d, %d partitions see the new end, want %d", round, fresh, want)
		}
	}
	for p, v := range c.reads {
		if v < 2 {
			t.Fatalf("partition %d read %d times in four samples, want at least 2", p, v)
		}
	}
}

// TestPublishedRatesRightAfterAStart: a run that has just started (after a hand-over, say) publishes the flow it
// sees from its second sample on. The compat gauges' rate would show a fraction of it for half a minute: Kafka's
// rule counts the time since a window started as at least 30 s.
func TestPublishedRatesRightAfterAStart(t *testing.T) {
	reg := metrics.New()
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 99, "")
	p.metrics = partitionMetrics{m: reg.SourcePartition(metrics.PartitionLabels{Connector: "c", SourceAlias: "A",
		TargetAlias: "B", Topic: "t", RemoteTopic: "A.t"})}
	r := &sourceRun{env: &statsEnv{}, parts: []*sourcePartition{p}}
	at := time.Now()
	r.sampleStats(nil, at)
	const perSecond = 17
	for i := range int64(perSecond) {
		p.forwarded(100+i, at.UnixMilli(), 1024, 1000)
		p.metrics.fetched(1000, at)
		if ok, _, _, _ := p.ack(200 + i); !ok {
			t.Fatal("ack refused")
		}
		p.metrics.acked(at.UnixMilli(), 1024, at)
	}
	r.sampleStats(nil, at.Add(time.Second))
	if got := p.stats.last.RecordsPerSecond; got != perSecond {
		t.Fatalf("published %v records/s one second into the run, want the %d that flowed", got, perSecond)
	}
	if compat, _ := p.metrics.m.Rates(); compat >= perSecond/2 {
		t.Fatalf("the compat rate is %v: this test no longer shows the difference it is about", compat)
	}
}

// OppositeRanges: no opposite flow writes into the partitions.
func (e *statsEnv) OppositeRanges(context.Context, []kmtype.RangeQuery) ([]kmtype.TargetRange, error) {
	return nil, nil
}
