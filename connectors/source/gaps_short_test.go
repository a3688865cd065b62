package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/tasks"
)

// librdkafka's error codes the consumer's errors carry (rd_kafka_resp_err_t).
const (
	codeOffsetOutOfRange  = 1
	codeUnknownTopic      = 3
	codeTopicAuthz        = 29
	codeAllBrokersDown    = -187
	codeAuthenticationErr = -169
	codeUnknownPartition  = -190
)

// logReader is a source consumer over logs whose start and end offsets the test sets; it records seeks.
type logReader struct {
	logs  map[mirror.TopicPartition][2]int64 // low, high
	seeks map[mirror.TopicPartition]int64
	moves map[mirror.TopicPartition]int // seeks by partition
	fail  error                         // Watermarks' error while set
}

func (c *logReader) Watermarks(topic string, partition int32, _ time.Duration) (int64, int64, error) {
	if c.fail != nil {
		return 0, 0, c.fail
	}
	lh, ok := c.logs[mirror.TopicPartition{Topic: topic, Partition: partition}]
	if !ok {
		return 0, 0, kafka.CodeError(codeUnknownTopic, "unknown topic", false)
	}
	return lh[0], lh[1], nil
}

func (c *logReader) CachedWatermarks(topic string, partition int32) (int64, int64, error) {
	return c.Watermarks(topic, partition, 0)
}

func (c *logReader) Seek(topic string, partition int32, offset int64) error {
	tp := mirror.TopicPartition{Topic: topic, Partition: partition}
	c.seeks[tp] = offset
	if c.moves == nil {
		c.moves = map[mirror.TopicPartition]int{}
	}
	c.moves[tp]++
	return nil
}

// shapes is a source cluster's topics by name.
type shapes map[string]kafka.TopicShape

func (s shapes) TopicShapes(_ context.Context, topics []string) (map[string]kafka.TopicShape, error) {
	out := map[string]kafka.TopicShape{}
	for _, t := range topics {
		if sh, ok := s[t]; ok {
			out[t] = sh
		}
	}
	return out, nil
}

// gapRun is a running task over parts whose source topics have id "id-1", reading with policy.
func gapRun(policy string, parts ...*sourcePartition) *sourceRun {
	log := slog.New(slog.DiscardHandler)
	r := &sourceRun{t: &sourceTask{id: tasks.TaskID{Connector: "mm2", Task: 0}}, log: log, sourceAlias: "A", targetAlias: "B",
		resetPolicy: policy, parts: parts, bySource: map[string][]*sourcePartition{}, limit: lograte.New(time.Minute)}
	for _, p := range parts {
		r.bySource[p.tp.Topic] = append(r.bySource[p.tp.Topic], p)
	}
	r.ids = &identityWatch{parts: parts, bySource: r.bySource, sourceAlias: "A", targetAlias: "B", notices: &r.noticeBoard,
		log: log, limit: r.limit, remoteIDs: map[string]string{}}
	return r
}

// Every gap a fetch runs into is reported once, with the offsets lost, however often the consumer says its
// position is out of range; the partition then goes on where auto.offset.reset says.
func TestEveryGapIsReportedExactlyOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		policy := rapid.SampledFrom([]string{"earliest", "latest"}).Draw(t, "policy")
		n := rapid.IntRange(1, 4).Draw(t, "partitions")
		reader := &logReader{logs: map[mirror.TopicPartition][2]int64{}, seeks: map[mirror.TopicPartition]int64{}}
		var parts []*sourcePartition
		type gap struct {
			kind        string
			first, last int64
		}
		want := map[mirror.TopicPartition]gap{}
		for i := range n {
			tp := mirror.TopicPartition{Topic: "t", Partition: int32(i)}
			acked := rapid.Int64Range(-1, 100).Draw(t, "acked")
			p := newSourcePartition(tp, "A.t", acked, "id-1")
			if acked < 0 {
				p.startAt = rapid.Int64Range(-1, 50).Draw(t, "startAt")
			}
			parts = append(parts, p)
			low := rapid.Int64Range(0, 150).Draw(t, "low")
			high := low + rapid.Int64Range(0, 50).Draw(t, "length")
			reader.logs[tp] = [2]int64{low, high}
			next := acked + 1
			if acked < 0 {
				next = p.startAt
			}
			switch {
			case next < 0:
			case next < low:
				want[tp] = gap{NoticeDataNotReplicated, next, low - 1}
			case next > high:
				want[tp] = gap{NoticeSourceTruncated, high, next - 1}
			}
		}
		r := gapRun(policy, parts...)
		for range rapid.IntRange(1, 3).Draw(t, "out-of-range errors") {
			// librdkafka names the partition, or not (a client-wide event).
			require.NoError(t, r.skipOutOfRange(reader, &kafka.PartitionError{Topic: "t", Partition: 0,
				Err: kafka.CodeError(codeOffsetOutOfRange, "out of range", false)}))
			require.NoError(t, r.skipOutOfRange(reader, nil))
		}
		got := map[mirror.TopicPartition]gap{}
		for _, n := range r.noticeList() {
			tp := mirror.TopicPartition{Topic: n.Topic, Partition: *n.Partition}
			if _, dup := got[tp]; dup {
				t.Fatalf("partition %v reported twice: %v", tp, r.noticeList())
			}
			got[tp] = gap{n.Kind, *n.FirstOffset, *n.LastOffset}
		}
		require.Equal(t, want, got)
		for tp := range want {
			lh := reader.logs[tp]
			at := lh[0]
			if policy == "latest" {
				at = lh[1]
			}
			require.Equal(t, at, reader.seeks[tp], "%v continues as auto.offset.reset says", tp)
			require.Equal(t, 1, reader.moves[tp], "%v is moved past its gap once: a later error must not move it back", tp)
		}
		require.Len(t, reader.seeks, len(want), "only the partitions out of range move")
	})
}

// With auto.offset.reset=none a gap stops the task, naming the offsets API to move past it; a partition whose
// topic is gone is left to the identity watch; a failing consumer restarts the pipeline.
func TestGapWithoutResetPolicyStopsTheTask(t *testing.T) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 9, "id-1")
	reader := &logReader{logs: map[mirror.TopicPartition][2]int64{{Topic: "t"}: {20, 30}}, seeks: map[mirror.TopicPartition]int64{}}
	r := gapRun("error", p)
	err := r.skipOutOfRange(reader, nil)
	require.ErrorContains(t, err, "records 10 to 19 of A topic t partition 0 were deleted (retention) before they were replicated")
	require.ErrorContains(t, err, "PATCH /connectors/mm2/offsets")
	require.Empty(t, reader.seeks)

	gone := newSourcePartition(mirror.TopicPartition{Topic: "gone", Partition: 0}, "A.gone", 9, "id-1")
	require.NoError(t, gapRun("earliest", gone).skipOutOfRange(reader, nil), "an unknown topic is the identity watch's")

	reader.fail = kafka.CodeError(codeAllBrokersDown, "all brokers down", false)
	var pe *pipelineError
	require.ErrorAs(t, gapRun("earliest", p).skipOutOfRange(reader, nil), &pe)
}

// A re-created source topic shows as a position out of range when its new log is shorter: the topic id tells,
// and the pipeline starts the topic over instead of reporting a gap.
func TestOutOfRangeOfARecreatedTopicRestartsIt(t *testing.T) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 99, "id-1")
	reader := &logReader{logs: map[mirror.TopicPartition][2]int64{{Topic: "t"}: {0, 10}}, seeks: map[mirror.TopicPartition]int64{}}
	r := gapRun("earliest", p)
	check, err := r.ids.checkSources(context.Background(), shapes{"t": {ID: "id-2", Partitions: 1}}, nil, false)
	require.NoError(t, err)
	require.Equal(t, []*sourcePartition{p}, check.recreated)
	require.Equal(t, "id-2", p.newID)
	require.Empty(t, r.noticeList(), "a re-created topic is no gap")
	require.Empty(t, reader.seeks)
}

// consumeError tells the errors that end a pipeline from those that are waited out or reported.
func TestConsumeErrorsThatStopAndThatWait(t *testing.T) {
	ctx := context.Background()
	reader := &logReader{logs: map[mirror.TopicPartition][2]int64{}, seeks: map[mirror.TopicPartition]int64{}}
	code := func(c int) error { return kafka.CodeError(c, fmt.Sprintf("code %d", c), false) }
	part := func(err error) error { return &kafka.PartitionError{Topic: "t", Partition: 0, Err: err} }
	r := gapRun("earliest")

	require.NoError(t, r.consumeError(ctx, reader, part(code(codeUnknownTopic))))
	require.Equal(t, []string{NoticeSourceTopicMissing}, kinds(r.noticeList()))
	require.ErrorContains(t, r.consumeError(ctx, reader, part(code(codeTopicAuthz))), "read A topic t")
	require.NoError(t, r.consumeError(ctx, reader, part(code(codeAllBrokersDown))), "other partition errors are logged")

	require.ErrorContains(t, r.consumeError(ctx, reader, code(codeTopicAuthz)), "read from A")
	require.ErrorContains(t, r.consumeError(ctx, reader, code(codeAuthenticationErr)), "authenticate to source cluster A")
	require.NoError(t, r.consumeError(ctx, reader, code(codeUnknownPartition)))
	require.NoError(t, r.consumeError(ctx, reader, code(codeAllBrokersDown)))
	require.Contains(t, kinds(r.noticeList()), NoticeSourceUnreachable, "a retriable source error shows while it lasts")
	require.NoError(t, r.consumeError(ctx, reader, errors.New("something else")))
}

// A partition whose source topic is gone (deleted, or re-created without it) is marked gone and shown once,
// until the topic is back as the one its offsets belong to; a running check learns its log start and end.
func TestGonePartitionsAreMarkedAndShownOnce(t *testing.T) {
	ctx := context.Background()
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 1}, "A.t", 9, "id-1")
	fresh := newSourcePartition(mirror.TopicPartition{Topic: "u", Partition: 0}, "A.u", -1, "")
	r := gapRun("earliest", p, fresh)
	reader := &logReader{logs: map[mirror.TopicPartition][2]int64{{Topic: "t", Partition: 1}: {5, 40}}, seeks: map[mirror.TopicPartition]int64{}}
	cluster := shapes{"t": {ID: "id-1", Partitions: 2}, "u": {ID: "id-u", Partitions: 1}}

	check, err := r.ids.checkSources(ctx, cluster, reader, false)
	require.NoError(t, err)
	require.Empty(t, check.recreated)
	require.Equal(t, int64(5), p.logStart, "learned from the consumer's watermarks")
	require.Equal(t, int64(40), p.seenEnd)
	id, dirty := fresh.identity()
	require.Equal(t, "id-u", id, "a partition without a known id adopts the current one")
	require.True(t, dirty, "and stores it with its next commit")

	for _, gone := range []shapes{{"u": {ID: "id-u", Partitions: 1}}, {"t": {ID: "id-2", Partitions: 1}, "u": {ID: "id-u", Partitions: 1}}} {
		for range 2 {
			_, err := r.ids.checkSources(ctx, gone, reader, false)
			require.NoError(t, err)
		}
		require.True(t, p.isGone())
		require.Equal(t, []string{NoticeSourceTopicMissing}, kinds(r.noticeList()), "shown once")
	}
	_, err = r.ids.checkSources(ctx, cluster, reader, false)
	require.NoError(t, err)
	require.False(t, p.isGone())
	require.Empty(t, r.noticeList())

	_, err = r.ids.checkSources(ctx, failingShapes{}, reader, false)
	require.ErrorContains(t, err, "read the ids of source topics on A")
}

type failingShapes struct{}

func (failingShapes) TopicShapes(context.Context, []string) (map[string]kafka.TopicShape, error) {
	return nil, errors.New("cluster down")
}
