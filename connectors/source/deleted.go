package source

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
)

// A partition of a deleted source topic (or of one re-created with fewer partitions) stays in the plan while its
// task drains what the source still serves of it: until the task says it has replicated everything it could
// read (statusDeleted), or its published position has not moved for goneDrainIdle.
const goneDrainIdle = 30 * time.Second

// maxLossNotices bounds the connector's notices about deleted partitions: a deleted topic of thousands of
// partitions must not grow the status without limit; the oldest go first (the log keeps every one).
const maxLossNotices = 200

// drainState is what the planner knows of a gone partition it still plans.
type drainState struct {
	pos     int64     // the replicated offset its task last published; -1 none
	movedAt time.Time // when pos last moved (or the drain began)
}

// goneFromPlan returns the partitions of the current plan that the source no longer has: their topic is not
// listed (deleted), or lists fewer partitions (deleted and re-created smaller). all is every topic on the source,
// selected or not: a partition whose topic is merely no longer selected is not gone, nothing of it is lost.
func goneFromPlan(order []mirror.TopicPartition, all map[string]int) []mirror.TopicPartition {
	var out []mirror.TopicPartition
	for _, tp := range order {
		if n, ok := all[tp.Topic]; !ok || int(tp.Partition) >= n {
			out = append(out, tp)
		}
	}
	return out
}

// planStats reads the partitions' last published stats when this round needs them: on the first plan of a run
// (the stats of partitions a previous plan held, whose topic may be gone since) and while partitions of the plan
// are gone. nil when not needed or unreadable (ok false then).
func (r *sourcePlanner) planStats(ctx context.Context, gone []mirror.TopicPartition) (stats map[mirror.TopicPartition]kmtype.PartitionStat, ok bool) {
	if r.planned && len(gone) == 0 {
		return nil, true
	}
	list, err := r.env.PartitionStats(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("cannot read the partitions' last stats; deleted source partitions are judged at the next plan round", "error", err)
		}
		return nil, false
	}
	stats = make(map[mirror.TopicPartition]kmtype.PartitionStat, len(list))
	for _, st := range list {
		stats[mirror.TopicPartition{Topic: st.Topic, Partition: st.Partition}] = st
	}
	return stats, true
}

// withDraining returns the topics to plan: the replicated topics on the source, and the gone partitions of the
// previous plan whose task still drains them (as a partition count wide enough to hold them: partitionOrder
// keeps their places). statsOK false means the stats could not be read: a partition then stays until it has
// been idle for goneDrainIdle since its drain began.
func (r *sourcePlanner) withDraining(gone []mirror.TopicPartition, topics map[string]int,
	stats map[mirror.TopicPartition]kmtype.PartitionStat, statsOK bool) map[string]int {
	if len(gone) == 0 {
		r.draining = nil
		return topics
	}
	now := time.Now()
	planned := maps.Clone(topics)
	next := make(map[mirror.TopicPartition]*drainState, len(gone))
	for _, tp := range gone {
		d := r.draining[tp]
		if d == nil {
			d = &drainState{pos: -1, movedAt: now}
			r.log.Info("source partition gone; its task replicates what the source still serves of it before the plan drops it",
				"cluster", r.sourceAlias, "topic", tp.Topic, "partition", tp.Partition)
		}
		st, has := stats[tp]
		if has && st.ReplicatedOffset != d.pos {
			d.pos, d.movedAt = st.ReplicatedOffset, now
		}
		idle := now.Sub(d.movedAt) >= goneDrainIdle
		nobody := has && (st.Status == statusStop || st.Status == statusPaused)
		if idle || (statsOK && (!has || nobody || st.Status == statusDeleted)) {
			continue
		}
		next[tp] = d
		planned[tp.Topic] = max(planned[tp.Topic], int(tp.Partition)+1)
	}
	r.draining = next
	return planned
}

// judgeDropped reports, for every partition whose stats a task published but which the plan no longer holds
// because the source lost it (all: every topic on the source), the records it took with it that were never
// confirmed replicated: from the last committed offset (or the published position, if further) to the end
// offset last seen. (Records a pipeline had sent when it restarted, unconfirmed, may be on the target all the
// same; the task's own notice names them.) A notice is shown only when something was lost, or when no end offset was ever seen (whether anything
// was lost cannot be known then); a lossless deletion is logged. It returns whether a notice was added.
func (r *sourcePlanner) judgeDropped(ctx context.Context, all map[string]int, order []mirror.TopicPartition,
	stats map[mirror.TopicPartition]kmtype.PartitionStat) bool {
	inPlan := make(map[mirror.TopicPartition]bool, len(order))
	for _, tp := range order {
		inPlan[tp] = true
	}
	var committed map[mirror.TopicPartition]storedOffset
	added := false
	for _, tp := range slices.SortedFunc(maps.Keys(stats), comparePartitions) {
		n, exists := all[tp.Topic]
		if inPlan[tp] || (exists && int(tp.Partition) < n) {
			continue
		}
		if committed == nil {
			committed = r.committedOffsets(ctx)
		}
		if r.judgeGone(tp, stats[tp], committed, exists, n) {
			added = true
		}
	}
	return added
}

func comparePartitions(a, b mirror.TopicPartition) int {
	if a.Topic != b.Topic {
		if a.Topic < b.Topic {
			return -1
		}
		return 1
	}
	return int(a.Partition - b.Partition)
}

// committedOffsets reads the connector's committed offsets of this source cluster (empty when unreadable:
// the published positions then stand in for them).
func (r *sourcePlanner) committedOffsets(ctx context.Context) map[mirror.TopicPartition]storedOffset {
	all, err := r.env.ReadOffsets(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("cannot read the committed offsets; judging deleted partitions on their published positions", "error", err)
		}
		return map[mirror.TopicPartition]storedOffset{}
	}
	return clusterOffsets(all, r.sourceAlias)
}

// judgeGone judges one dropped partition (see judgeDropped); recreated says the topic exists again with
// partitions partitions.
func (r *sourcePlanner) judgeGone(tp mirror.TopicPartition, st kmtype.PartitionStat, committed map[mirror.TopicPartition]storedOffset,
	recreated bool, partitions int) bool {
	from := st.ReplicatedOffset
	if c, ok := committed[tp]; ok {
		from = max(from, c.offset+1)
	}
	what := fmt.Sprintf("%s topic %s partition %d was deleted", r.sourceAlias, tp.Topic, tp.Partition)
	if recreated {
		what = fmt.Sprintf("%s topic %s partition %d was deleted (the topic was re-created with %d partitions, without this one)",
			r.sourceAlias, tp.Topic, tp.Partition, partitions)
	}
	at := st.UpdatedAt.UTC().Format(time.RFC3339)
	var who string
	switch st.Status {
	case statusDeleted:
		who = fmt.Sprintf("task %d replicated it until the source served no more of it, and saw its end at offset %%d", st.Task)
	case statusPaused:
		who = fmt.Sprintf("the connector was paused; its task %d last saw the end at offset %%d at %s", st.Task, at)
	case statusStop:
		who = fmt.Sprintf("no task was replicating it: the connector was stopped, or its task %d restarting; its end was last seen at offset %%d at %s", st.Task, at)
	default:
		who = fmt.Sprintf("task %d was replicating it and last saw its end at offset %%d at %s", st.Task, at)
	}
	if st.EndOffset == nil {
		msg := fmt.Sprintf("%s; no end offset of it was ever seen, so whether it held records past offset %d, which were then not replicated, cannot be known",
			what, from-1)
		r.log.Warn(msg, "topic", tp.Topic, "partition", tp.Partition)
		r.lossNotice(fmt.Sprintf("deleted:%s-%d:%d", tp.Topic, tp.Partition, from),
			partitionNotice(NoticeSourceTopicDeleted, msg, tp.Topic, tp.Partition, from, -1))
		return true
	}
	end := *st.EndOffset
	who = fmt.Sprintf(who, end)
	if end <= from {
		r.log.Info(what+"; every record of it had been replicated ("+who+")", "topic", tp.Topic, "partition", tp.Partition, "end", end)
		return false
	}
	msg := fmt.Sprintf("DATA NOT REPLICATED: %s before records %d to %d were confirmed replicated to %s; they cannot be read any more (%s; records written after that were deleted unseen)",
		what, from, end-1, r.targetAlias, who)
	r.log.Error(msg, "topic", tp.Topic, "partition", tp.Partition, "lost_from", from, "lost_to", end-1)
	r.lossNotice(fmt.Sprintf("deleted:%s-%d:%d", tp.Topic, tp.Partition, from),
		partitionNotice(NoticeDataNotReplicated, msg, tp.Topic, tp.Partition, from, end-1))
	return true
}

// lossNotice keeps a notice about a deleted partition in the connector's status; saveLosses keeps it beyond
// this run.
func (r *sourcePlanner) lossNotice(key string, n kmtype.Notice) {
	r.keepLoss(key, n)
	r.unsaved = append(r.unsaved, key)
}

func (r *sourcePlanner) keepLoss(key string, n kmtype.Notice) {
	if r.lost == nil {
		r.lost = map[string]kmtype.Notice{}
	}
	if _, ok := r.lost[key]; !ok {
		r.lostOrder = append(r.lostOrder, key)
	}
	r.lost[key] = n
	for len(r.lostOrder) > maxLossNotices {
		delete(r.lost, r.lostOrder[0])
		r.lostOrder = r.lostOrder[1:]
	}
}

// saveLosses stores the loss notices this run found, so that they outlive it (a worker restart, a move, a pause
// or a stop). A failure other than fencing is logged; the next plan round tries again.
func (r *sourcePlanner) saveLosses(ctx context.Context) error {
	for len(r.unsaved) > 0 {
		key := r.unsaved[0]
		if n, ok := r.lost[key]; ok {
			err := r.env.RecordLoss(ctx, kmtype.Loss{Key: key, Notice: n}, maxLossNotices)
			if errors.Is(err, kmtype.ErrFenced) {
				return err
			}
			if err != nil {
				if ctx.Err() == nil {
					r.log.Warn("could not store a loss notice; will retry on the next plan round (the log keeps it)", "error", err)
				}
				return nil
			}
		}
		r.unsaved = r.unsaved[1:]
	}
	return nil
}

// loadLosses shows the loss notices earlier runs of the connector stored.
func (r *sourcePlanner) loadLosses(ctx context.Context) {
	losses, err := r.env.Losses(ctx)
	if err != nil {
		if ctx.Err() == nil {
			r.log.Warn("could not read the connector's earlier loss notices; the log keeps them", "error", err)
		}
		return
	}
	for _, l := range losses {
		r.keepLoss(l.Key, l.Notice)
	}
}

// lossNotices returns the notices about deleted partitions, oldest first.
func (r *sourcePlanner) lossNotices() []kmtype.Notice {
	out := make([]kmtype.Notice, 0, len(r.lostOrder))
	for _, k := range r.lostOrder {
		out = append(out, r.lost[k])
	}
	return out
}
