package source

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
)

// On the C data path a partition's bookkeeping moves a run of records at a time; the commit invariant holds as
// on the Go path: the offset stored is one the target acknowledged with everything before it, and it never
// moves backwards, whether the records were acknowledged with offsets, written without them, or failed.
func TestBatchedCommitsNeverPassTheAcknowledgedOnes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		env := &commitRecorder{}
		p := startedPartition("c")
		c := testCommitter(env, p)
		var next int64
		var pending []int64 // forwarded, not reported
		contiguous, stored := int64(-1), int64(-1)
		broken, confirmed := false, false
		for range rapid.IntRange(1, 50).Draw(t, "steps") {
			switch rapid.IntRange(0, 5).Draw(t, "op") {
			case 0: // the C path forwards a run
				if broken {
					continue
				}
				n := rapid.IntRange(1, 5).Draw(t, "n")
				p.forwardedBatch(next, next+int64(n)-1, 1_700_000_000_000, n, int64(10*n))
				for i := range n {
					pending = append(pending, next+int64(i))
				}
				next += int64(n)
			case 1, 2: // reports of the oldest k: acknowledged with offsets, or dropped after a failure
				if len(pending) == 0 {
					continue
				}
				k := rapid.IntRange(1, len(pending)).Draw(t, "k")
				first := pending[0]
				pending = pending[k:]
				if broken {
					p.droppedRun(int64(k))
					continue
				}
				p.ackedRun(first, 1000+first, int64(k), 1_700_000_000_000, nil)
				contiguous, confirmed = first+int64(k)-1, true
			case 3: // written without offsets, after a confirmed delivery
				if len(pending) == 0 || broken || !confirmed {
					continue
				}
				k := rapid.IntRange(1, len(pending)).Draw(t, "k")
				last := pending[k-1]
				pending = pending[k:]
				p.ackedUnmappedRun(last, int64(k), 1_700_000_000_000)
				contiguous = last
			case 4: // the oldest fails
				if len(pending) == 0 || broken {
					continue
				}
				pending = pending[1:]
				p.failBatched()
				broken = true
			case 5:
				if err := c.commit(context.Background()); err != nil {
					t.Fatal(err)
				}
				for _, batch := range env.offsets {
					for _, o := range batch {
						off, _ := jsonInt(o.Offset["offset"])
						if off > contiguous || off < stored {
							t.Fatalf("offset %d committed: acknowledged through %d, stored before %d", off, contiguous, stored)
						}
						stored = off
					}
				}
				env.offsets = nil
				if stored != contiguous {
					t.Fatalf("stored %d, acknowledged through %d", stored, contiguous)
				}
			}
		}
	})
}

// A record too large names the limit that was hit: the producer's request limit (it was never sent) or the
// remote topic's (the broker refused it); a passing failure restarts the pipeline instead of failing the task.
func TestRefusedRecordsNameTheLimitHit(t *testing.T) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 2}, "A.t", -1, "")
	r := &sourceRun{sourceAlias: "A", targetAlias: "B", producerProps: map[string]string{}}
	tooLarge := kafka.CodeError(10, "message size too large", false)

	err := r.refusedError(p, 7, 2_000_000, tooLarge)
	require.ErrorContains(t, err, "replicate A topic t partition 2 offset 7 (2000000 value bytes) to B topic A.t")
	require.ErrorContains(t, err, "max.request.size (librdkafka's default)")
	r.producerProps[producerRequestLimit] = "1048576"
	require.ErrorContains(t, r.refusedError(p, 7, -1, tooLarge), "max.request.size (1048576 bytes)")

	var pe *pipelineError
	require.ErrorAs(t, r.refusedError(p, 7, 1, kafka.CodeError(codeAllBrokersDown, "down", false)), &pe, "retried by a new pipeline")
	require.ErrorAs(t, r.refusedError(p, 7, 1, kafka.CodeError(-150, "fatal", true)), &pe, "a fatal producer is replaced")
	require.False(t, errors.As(r.refusedError(p, 7, 1, errors.New("invalid record")), &pe), "anything else fails the task")

	require.Contains(t, r.refusedByBrokerAdvice(p, tooLarge), "raise that topic's max.message.bytes on B")
	require.Empty(t, r.refusedByBrokerAdvice(p, errors.New("other")))
}

// A consumer of uncommitted records that skipped a transaction marker makes the partition show that aborted
// records may have been copied; one reading committed records shows nothing.
func TestUncommittedReadsAreShownOnlyWhenMarkersWereSkipped(t *testing.T) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", -1, "")
	p.fresh, p.startAt = true, 0
	r := &sourceRun{targetAlias: "B", consumerProps: map[string]string{}}
	r.noticeUncommitted(p)
	require.Empty(t, r.noticeList(), "read_committed")

	r.consumerProps[isolationLevelKey] = isolationReadUncommitted
	p.readUncommitted()
	p.forwarded(0, 1, 1, 1)
	p.ack(0)
	r.noticeUncommitted(p)
	require.Empty(t, r.noticeList(), "no offset skipped")

	p.forwarded(2, 1, 1, 1) // offset 1 was a commit marker
	p.ack(1)
	r.noticeUncommitted(p)
	ns := r.noticeList()
	require.Len(t, ns, 1)
	require.Equal(t, NoticeAbortedRecordsReplicated, ns[0].Kind)
	require.Equal(t, int64(1), *ns[0].FirstOffset)
}

// A running task starts each partition's end at what its last published stats saw, unless those stats belong
// to another incarnation of the topic (their position is behind the committed offset).
func TestSeenEndsComeFromTheLastStatsOfTheSameIncarnation(t *testing.T) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", 41, "id-1")
	q := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 1}, "A.t", 41, "id-1")
	w := &identityWatch{parts: []*sourcePartition{p, q}, bySource: map[string][]*sourcePartition{"t": {p, q}}}
	w.log = gapRun("earliest").log
	at := time.Unix(1_700_000_000, 0)
	w.loadSeenEnds(context.Background(), statsOnly{
		{Topic: "t", Partition: 0, ReplicatedOffset: 42, EndOffset: i64(90), UpdatedAt: at},
		{Topic: "t", Partition: 1, ReplicatedOffset: 10, EndOffset: i64(20), UpdatedAt: at}, // another incarnation's
		{Topic: "gone", Partition: 0, ReplicatedOffset: 1, EndOffset: i64(5)},
	})
	require.Equal(t, int64(90), p.seenEnd)
	require.Equal(t, at, p.seenAt)
	require.Equal(t, int64(0), q.seenEnd)
	w.loadSeenEnds(context.Background(), statsOnly(nil))
	require.Equal(t, int64(90), p.seenEnd, "nothing read, nothing changed")
}

type statsOnly []kmtype.PartitionStat

func (s statsOnly) PartitionStats(context.Context) ([]kmtype.PartitionStat, error) { return s, nil }

// In exactly-once mode a record the target acknowledged inside the open transaction counts only once the
// transaction committed: the offset stored never covers a record of an aborted (or open) transaction, which a
// read_committed consumer of the target never sees, and never moves backwards.
func TestTransactionalCommitsCoverCommittedTransactionsOnly(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		env := &commitRecorder{}
		p := startedPartition("x")
		c := testCommitter(env, p)
		var next int64
		var inflight, staged []int64
		committedTxn, stored := int64(-1), int64(-1)
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0:
				p.forwarded(next, 1_700_000_000_000, 10, 5)
				inflight = append(inflight, next)
				next++
			case 1: // the target acknowledges the oldest inside the transaction
				if len(inflight) == 0 {
					continue
				}
				staged = append(staged, inflight[0])
				inflight = inflight[1:]
				p.stage(2 * staged[len(staged)-1])
			case 2: // the transaction commits
				p.committedTxn(time.Now(), nil)
				if len(staged) > 0 {
					committedTxn = staged[len(staged)-1]
				}
				staged = nil
			case 3: // it aborts: the next pipeline sends the staged and in-flight records again
				p.abortedTxn()
				staged, inflight = nil, nil
				next = p.reset() + 1
				if next != committedTxn+1 {
					t.Fatalf("the next pipeline resumes after %d, the last committed transaction ended at %d", next-1, committedTxn)
				}
			case 4:
				if err := c.commit(context.Background()); err != nil {
					t.Fatal(err)
				}
				for _, batch := range env.offsets {
					for _, o := range batch {
						off, _ := jsonInt(o.Offset["offset"])
						if off > committedTxn || off < stored {
							t.Fatalf("offset %d committed: transactions committed through %d, stored before %d", off, committedTxn, stored)
						}
						stored = off
					}
				}
				env.offsets = nil
			}
		}
	})
}
