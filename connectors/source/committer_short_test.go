package source

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
)

// Whatever the target acknowledges, fails or leaves in flight, and whenever commits happen or fail: the offset
// stored for a partition is one the target acknowledged, with every record before it acknowledged too (nothing
// committed beyond what the target acknowledged), and it never moves backwards.
func TestCommittedOffsetsNeverPassTheAcknowledgedOnes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		env := &commitRecorder{}
		parts := []*sourcePartition{startedPartition("a"), startedPartition("b")}
		c := testCommitter(env, parts...)
		type model struct {
			next       int64   // the next source offset to forward
			inflight   []int64 // forwarded, not reported yet
			contiguous int64   // the last offset acknowledged with all forwarded before it acknowledged; -1 none
			broken     bool    // a delivery failed: nothing after it counts until the pipeline restarts
			stored     int64   // what the store holds; -1 nothing
		}
		ms := []*model{{contiguous: -1, stored: -1}, {contiguous: -1, stored: -1}}
		for range rapid.IntRange(1, 60).Draw(t, "steps") {
			i := rapid.IntRange(0, 1).Draw(t, "partition")
			p, m := parts[i], ms[i]
			switch rapid.IntRange(0, 4).Draw(t, "op") {
			case 0: // forward, past a compacted gap sometimes
				if m.broken {
					continue // the poll loop stops handing the partition's records over
				}
				m.next += rapid.Int64Range(0, 2).Draw(t, "gap")
				p.forwarded(m.next, 1_700_000_000_000+m.next, 10, 5)
				m.inflight = append(m.inflight, m.next)
				m.next++
			case 1: // the target acknowledges the oldest
				if len(m.inflight) == 0 {
					continue
				}
				off := m.inflight[0]
				m.inflight = m.inflight[1:]
				p.ack(off * 2)
				if !m.broken {
					m.contiguous = off
				}
			case 2: // the target fails the oldest
				if len(m.inflight) == 0 {
					continue
				}
				m.inflight = m.inflight[1:]
				p.fail()
				m.broken = true
			case 3, 4: // commit, which the store may refuse
				failing := rapid.Bool().Draw(t, "store fails")
				env.commitErr = nil
				if failing {
					env.commitErr = errors.New("database down")
				}
				before := len(env.offsets)
				err := c.commit(context.Background())
				if err != nil && !failing {
					t.Fatalf("commit: %v", err)
				}
				for _, batch := range env.offsets[before:] {
					for _, o := range batch {
						off, _ := jsonInt(o.Offset["offset"])
						j := 0
						if o.Partition["topic"] == "b" {
							j = 1
						}
						if off > ms[j].contiguous {
							t.Fatalf("partition %d: offset %d committed, the target acknowledged through %d only", j, off, ms[j].contiguous)
						}
						if off < ms[j].stored {
							t.Fatalf("partition %d: committed offset moved back from %d to %d", j, ms[j].stored, off)
						}
						ms[j].stored = off
					}
				}
				if err == nil {
					for j := range ms {
						if ms[j].stored != ms[j].contiguous {
							t.Fatalf("partition %d: a successful commit stored %d, acknowledged through %d", j, ms[j].stored, ms[j].contiguous)
						}
					}
				}
			}
		}
	})
}

// lockedCommits is a commitRecorder a running commit loop and the test share.
type lockedCommits struct {
	mu sync.Mutex
	commitRecorder
}

func (e *lockedCommits) CommitProgress(ctx context.Context, offsets []kmtype.Offset, ranges []kmtype.OffsetRange) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.commitRecorder.CommitProgress(ctx, offsets, ranges)
}

func (e *lockedCommits) RecordTopics(ctx context.Context, topics []string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.commitRecorder.RecordTopics(ctx, topics)
}

func (e *lockedCommits) Report(ctx context.Context, ns []kmtype.Notice) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.commitRecorder.Report(ctx, ns)
}

func (e *lockedCommits) committed() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.offsets)
}

func (e *lockedCommits) failWith(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.commitErr = err
}

// The commit loop publishes the partitions' stats at once, commits acknowledged progress every round, retries
// a commit the store refused, and ends when a commit is fenced: the task lost its assignment.
func TestCommitLoopCommitsUntilFenced(t *testing.T) {
	p := startedPartition("t")
	p.forwarded(0, 1_700_000_000_000, 10, 5)
	p.ack(0)
	r, env := leasedRun(t, p)
	commits := &lockedCommits{}
	commits.failWith(errors.New("database down"))
	r.commits = testCommitter(commits, p)
	r.stalls = &stallWatch{parts: r.parts, notices: &r.noticeBoard, log: r.log, stallAfter: time.Minute}
	reader := &logReader{logs: map[mirror.TopicPartition][2]int64{{Topic: "t"}: {0, 1}}, seeks: map[mirror.TopicPartition]int64{}}

	done := make(chan error, 1)
	go func() { done <- r.commitLoop(context.Background(), nil, reader) }()
	awaitPlanner(t, "a commit once the store answers", func() bool {
		if commits.committed() > 0 {
			return true
		}
		commits.failWith(nil)
		return false
	})
	got, _ := env.latest()
	require.Equal(t, int64(1), got[0].ReplicatedOffset, "the first stats are published at once")

	p.forwarded(1, 1_700_000_000_001, 10, 5)
	p.ack(1)
	commits.failWith(kmtype.ErrFenced)
	select {
	case err := <-done:
		require.ErrorIs(t, err, kmtype.ErrFenced)
	case <-time.After(30 * time.Second):
		t.Fatal("the commit loop went on after a fenced commit")
	}
}

// Promoting delayed syncs gives a quiet partition an exact offset sync for its last record, as MM2 does on
// every offset flush; a partition with nothing delayed sends nothing.
func TestPromotedSyncsCoverTheLastRecord(t *testing.T) {
	target := &syncTarget{}
	syncs, _ := testSyncer(target)
	p, quiet := startedPartition("t"), startedPartition("quiet")
	p.withOffsetSyncs(100)
	quiet.withOffsetSyncs(100)
	for off := range int64(5) {
		p.forwarded(off, 1_700_000_000_000+off, 10, 5)
		if _, _, sync, send := p.ack(1000 + off); send {
			syncs.send(sync)
		}
	}
	for target.next(true) {
	}
	sent := len(target.written)
	c := testCommitter(&commitRecorder{}, p, quiet)
	c.promoteSyncs(syncs)
	for target.next(true) {
	}
	require.Len(t, target.written, sent+1, "one sync more")
	last := target.written[len(target.written)-1]
	require.Equal(t, mirror.OffsetSync{Topic: "t", Partition: 0, UpstreamOffset: 4, DownstreamOffset: 1004}, last)
	c.promoteSyncs(syncs)
	require.False(t, target.next(true), "nothing delayed any more")
}

// A round of the commit loop whose database never answers fails alone, within its time: the loop goes on and
// commits in the next round (it also runs the stall check that pauses and resumes forwarding). A fence and the
// loop's own end still end it.
func TestCommitLoopRoundsEndWithinTheirTime(t *testing.T) {
	p := startedPartition("t")
	p.forwarded(0, 1_700_000_000_000, 10, 5)
	p.ack(0)
	r, _ := leasedRun(t, p)
	r.roundTimeout = 50 * time.Millisecond
	commits := &hangingCommits{}
	r.commits = testCommitter(commits, p)
	r.stalls = &stallWatch{parts: r.parts, notices: &r.noticeBoard, log: r.log, stallAfter: time.Minute}
	reader := &logReader{logs: map[mirror.TopicPartition][2]int64{{Topic: "t"}: {0, 1}}, seeks: map[mirror.TopicPartition]int64{}}

	ctx, stop := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.commitLoop(ctx, nil, reader) }()
	awaitPlanner(t, "a commit after a round whose database never answered", func() bool { return commits.committed() > 0 })
	require.True(t, commits.hung.Load(), "the first commit waited for an answer that never came")
	stop()
	require.NoError(t, <-done)

	require.ErrorIs(t, r.inRound(context.Background(), "commit", func(context.Context) error { return kmtype.ErrFenced }), kmtype.ErrFenced)
	require.ErrorIs(t, r.inRound(ctx, "commit", func(ctx context.Context) error { return ctx.Err() }), context.Canceled, "the loop's end is returned")
}

// hangingCommits is lockedCommits whose first commit waits for an answer until its context ends, as a
// PostgreSQL connection that never answers a BEGIN.
type hangingCommits struct {
	lockedCommits
	hung atomic.Bool
}

func (e *hangingCommits) CommitProgress(ctx context.Context, offsets []kmtype.Offset, ranges []kmtype.OffsetRange) error {
	if e.hung.CompareAndSwap(false, true) {
		<-ctx.Done()
		return fmt.Errorf("begin: %w", ctx.Err())
	}
	return e.lockedCommits.CommitProgress(ctx, offsets, ranges)
}
