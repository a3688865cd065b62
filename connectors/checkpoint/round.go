package checkpoint

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/offsetmap"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/metrics"
)

// checkpointOpaque routes a checkpoint's delivery to the round and translation it belongs to.
type checkpointOpaque struct {
	round int64
	row   int
}

// round is one emission of checkpoints for the task's groups.
func (r *checkpointRun) round(ctx context.Context) error {
	r.rounds++
	readAt := time.Now()
	offsets, failed, err := r.source.GroupOffsets(ctx, r.groups)
	if err != nil {
		r.setNotice("groups", kmtype.Notice{Kind: NoticeGroupsUnreadable,
			Message: fmt.Sprintf("offsets of consumer groups on source cluster %s could not be read, retrying: %v", r.sourceAlias, err)})
		return errors.Join(err, r.report(ctx))
	}
	if len(failed) > 0 {
		names := slices.Sorted(maps.Keys(failed))
		r.setNotice("groups", kmtype.Notice{Kind: NoticeGroupsUnreadable,
			Message: fmt.Sprintf("offsets of %d consumer group(s) on source cluster %s could not be read, retrying: %s: %v", len(names), r.sourceAlias, names[0], failed[names[0]])})
	} else {
		r.clearNotice("groups")
	}

	for k := range r.notices {
		if strings.HasPrefix(k, groupNoticePrefix) {
			delete(r.notices, k) // set again below for every group that still has the problem
		}
	}

	// Translate in batches of whole groups: a round's memory stays bounded whatever the number of groups.
	var batch []string
	n := 0
	for i, g := range r.groups {
		if _, ok := offsets[g]; ok { // a group whose offsets could not be read keeps its last translations
			batch = append(batch, g)
			n += len(offsets[g])
		}
		if len(batch) > 0 && (n >= checkpointBatchRows || i == len(r.groups)-1) {
			if err := r.translateGroups(ctx, batch, offsets, readAt); err != nil {
				return err
			}
			batch, n = batch[:0], 0
		}
	}
	return r.report(ctx)
}

// checkpointBatchRows is about how many group partitions a round translates, checkpoints and publishes at a
// time (whole groups): the benchmark measured 5.5 MB of round memory per 1,000 translations when a round took
// all of a task's 100,000 at once.
const checkpointBatchRows = 5_000

// translateGroups translates, checkpoints and publishes the positions of a batch of groups.
func (r *checkpointRun) translateGroups(ctx context.Context, groups []string, offsets map[string][]kafka.GroupOffset, readAt time.Time) error {
	var rows []kmtype.GroupOffset
	var queries rangeQueries
	var lookup []int // row -> query
	for _, g := range groups {
		for _, o := range offsets[g] {
			if o.Offset < 0 || !r.topicFilter.Accepts(o.Topic) {
				continue
			}
			rows = append(rows, kmtype.GroupOffset{Group: g, Topic: o.Topic, Partition: o.Partition, UpstreamOffset: o.Offset,
				DownstreamTopic: r.renameTopic(o.Topic), Metadata: o.Metadata, ReadAt: readAt, Basis: basisNone})
			lookup = append(lookup, queries.add(kmtype.RangeQuery{Offset: o.Offset, RangeKey: kmtype.RangeKey{
				SourceAlias: r.sourceAlias, TargetAlias: r.targetAlias, Topic: o.Topic, Partition: o.Partition}}))
		}
	}
	around, err := r.env.OffsetRangesAround(ctx, queries.list)
	if err != nil {
		return fmt.Errorf("read the offset map: %w", err)
	}
	opposite, err := r.oppositeRanges(ctx, rows)
	if err != nil {
		return err
	}
	var emit []int // rows to checkpoint
	for i := range rows {
		row := &rows[i]
		r.translate(row, around[lookup[i]])
		if opposite[i] != nil {
			mergeOpposite(row, around[lookup[i]], *opposite[i])
		}
		if row.DownstreamOffset == nil {
			continue
		}
		c := checkpointOf(row)
		prev, seen := r.lastCheckpoint(c)
		switch {
		case !seen || c.UpstreamOffset < prev.UpstreamOffset || c.DownstreamOffset > prev.DownstreamOffset:
			// MM2's rule: only forward, unless the group itself moved back on the source.
			emit = append(emit, i)
		case c.DownstreamOffset == prev.DownstreamOffset:
			row.Emitted = true
		case !row.Exact:
			// The offset syncs translate coarser than when the last checkpoint was written (its sync has since
			// been thinned out, or an earlier MM2 or kmirror run wrote it): the group resumes at that checkpoint,
			// which stays on the topic and in the synced offsets, so that is its translation.
			d := prev.DownstreamOffset
			row.DownstreamOffset, row.Emitted = &d, true
		}
	}
	if err := r.emit(ctx, rows, emit, readAt); err != nil {
		return err
	}
	return r.publishGroupOffsets(ctx, groups, rows)
}

// groupNoticePrefix keys the notices about one group among the run's notices.
const groupNoticePrefix = "group:"

// publishGroupOffsets stores the translations for the API. A group whose id PostgreSQL cannot hold as text is
// left out with a notice, so that one group's name never stops the others' translations from being shown;
// its checkpoints and synced offsets are written all the same.
func (r *checkpointRun) publishGroupOffsets(ctx context.Context, groups []string, rows []kmtype.GroupOffset) error {
	var bad []string
	for _, g := range groups {
		if !kmtype.TextStorable(g) {
			bad = append(bad, g)
		}
	}
	for _, g := range bad {
		r.setNotice(groupNoticePrefix+g, kmtype.Notice{Kind: NoticeGroupNotShown,
			Message: fmt.Sprintf("consumer group %q is checkpointed, but its translations cannot be shown by the groups API: its id is not valid UTF-8 or holds a NUL", g)})
	}
	if len(bad) > 0 {
		groups = slices.DeleteFunc(slices.Clone(groups), func(g string) bool { return slices.Contains(bad, g) })
		rows = slices.DeleteFunc(slices.Clone(rows), func(o kmtype.GroupOffset) bool { return slices.Contains(bad, o.Group) })
	}
	if err := r.env.PutGroupOffsets(ctx, groups, rows); err != nil {
		return fmt.Errorf("publish group offsets: %w", err)
	}
	return nil
}

// Bases of a translation, as the group offsets API shows them.
const (
	basisMap   = kmtype.BasisOffsetMap
	basisSyncs = kmtype.BasisOffsetSyncs
	basisNone  = kmtype.BasisNone
)

// translate fills in where row's group resumes on the target: exactly from the offset map where it covers the
// position, else from the offset syncs as MM2 does (never ahead of the true position), else nowhere.
func (r *checkpointRun) translate(row *kmtype.GroupOffset, around kmtype.RangesAround) {
	prev, next := rangeOf(around.Prev), rangeOf(around.Next)
	if a, ok := offsetmap.Translate(prev, next, row.UpstreamOffset); ok {
		d := a.Offset
		row.DownstreamOffset, row.Exact, row.Basis = &d, a.Exact, basisMap
		src := around.Prev
		if src == nil {
			src = around.Next // the position lies in the gap the first range knows to precede it
		}
		at := src.UpdatedAt
		row.ReplicatedAt = &at
		return
	}
	if d, ok := r.syncs.Translate(mirror.TopicPartition{Topic: row.Topic, Partition: row.Partition}, row.UpstreamOffset); ok && d >= 0 {
		row.DownstreamOffset, row.Exact, row.Basis = &d, false, basisSyncs
	}
}

func rangeOf(r *kmtype.OffsetRange) *offsetmap.Range {
	if r == nil {
		return nil
	}
	return &offsetmap.Range{SourceStart: r.SourceStart, SourceEnd: r.SourceEnd, TargetStart: r.TargetStart, SourceNext: r.SourceNext,
		GapBefore: r.GapBefore, UnmappedBefore: r.UnmappedBefore, Uncommitted: r.Uncommitted}
}

// renameTopic names a source topic as it is on the target (MirrorCheckpointTask.renameTopicPartition): a topic
// that came from the target gets its original name back (failback), any other the remote name.
func (r *checkpointRun) renameTopic(topic string) string {
	if src, ok := r.policy.TopicSource(topic); ok && src == r.targetAlias {
		return r.policy.OriginalTopic(topic)
	}
	return r.policy.FormatRemoteTopic(r.sourceAlias, topic)
}

func checkpointOf(row *kmtype.GroupOffset) mirror.Checkpoint {
	return mirror.Checkpoint{Group: row.Group, Topic: row.DownstreamTopic, Partition: row.Partition,
		UpstreamOffset: row.UpstreamOffset, DownstreamOffset: *row.DownstreamOffset, Metadata: row.Metadata}
}

func (r *checkpointRun) lastCheckpoint(c mirror.Checkpoint) (mirror.Checkpoint, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	prev, ok := r.last[checkpointKey{c.Group, c.TopicPartition()}]
	return prev, ok
}

// emit writes the checkpoints of rows[emit] to partition 0 of the checkpoints topic and waits for them. Only
// acknowledged checkpoints count as the latest ones; the others are tried again next round.
func (r *checkpointRun) emit(ctx context.Context, rows []kmtype.GroupOffset, emit []int, readAt time.Time) error {
	if len(emit) == 0 {
		return nil
	}
	lease := r.env.Lease()
	sent := 0
	for _, i := range emit {
		if !lease.Valid() {
			break // the next round tries again; nothing may be written without the lease
		}
		c := checkpointOf(&rows[i])
		key, value, err := mirror.Encode(c)
		if err != nil {
			r.log.Warn("checkpoint cannot be encoded", "group", c.Group, "topic", c.Topic, "error", err)
			continue
		}
		for {
			err = r.producer.Produce(r.topic, 0, key, value, nil, readAt, checkpointOpaque{round: r.rounds, row: i})
			if !errors.Is(err, kafka.ErrQueueFull) {
				break
			}
			got, err := r.awaitDelivery(ctx, rows, time.Second)
			if err != nil {
				return err
			}
			if got {
				sent--
			}
		}
		if err != nil {
			return fmt.Errorf("write checkpoint to %s: %w", r.topic, err)
		}
		sent++
		// Take what has been acknowledged meanwhile, so the delivery handler never waits for this loop.
		for drained := false; !drained; {
			select {
			case d := <-r.deliveries:
				if r.applyDelivery(ctx, rows, d) {
					sent--
				}
			default:
				drained = true
			}
		}
	}
	deadline := time.Now().Add(r.settle())
	for sent > 0 && time.Now().Before(deadline) {
		got, err := r.awaitDelivery(ctx, rows, time.Until(deadline))
		if err != nil {
			return err
		}
		if got {
			sent--
		}
	}
	if r.failures > 0 {
		r.failures = 0
		// The topic may have been deleted: create it again (as the connector does at start) and write every
		// checkpoint again next round, since a new topic holds none of the earlier ones.
		if err := connectors.CreateCompactedTopic(ctx, r.target, r.topic, int(r.t.cfg.CheckpointsTopicReplicationFactor)); err != nil && ctx.Err() == nil {
			r.log.Warn("could not create the checkpoints topic", "topic", r.topic, "error", err)
		}
		r.mu.Lock()
		clear(r.last)
		r.mu.Unlock()
		return nil
	}
	r.clearNotice("checkpoints")
	return nil
}

// settle is how long a round waits for its checkpoints: the producer's delivery timeout is capped below the
// lease's settle window, so everything is delivered or failed by then.
func (r *checkpointRun) settle() time.Duration { return r.env.Lease().Settle() + 2*time.Second }

// awaitDelivery takes one delivery report of this round and applies it; got is false when none came within
// wait.
func (r *checkpointRun) awaitDelivery(ctx context.Context, rows []kmtype.GroupOffset, wait time.Duration) (got bool, err error) {
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-r.env.Lease().Revoked():
			return false, kmtype.ErrFenced
		case <-timer.C:
			return false, nil
		case d := <-r.deliveries:
			if r.applyDelivery(ctx, rows, d) {
				return true, nil
			}
		}
	}
}

// applyDelivery records one delivery report; it returns false for a report of an earlier round (one that
// stopped waiting for it).
func (r *checkpointRun) applyDelivery(ctx context.Context, rows []kmtype.GroupOffset, d kafka.Delivery) bool {
	o, ok := d.Opaque.(checkpointOpaque)
	if !ok || o.round != r.rounds {
		return false
	}
	row := &rows[o.row]
	if d.Err != nil {
		r.failures++
		r.limit.Log(ctx, r.log, slog.LevelWarn, "checkpoint-delivery", "checkpoint not written", "topic", r.topic, "error", d.Err)
		r.setNotice("checkpoints", kmtype.Notice{Kind: NoticeCheckpointsProblem,
			Message: fmt.Sprintf("checkpoints could not be written to %s on cluster %s, retrying: %v", r.topic, r.targetAlias, d.Err)})
		return true
	}
	c := checkpointOf(row)
	r.mu.Lock()
	r.last[checkpointKey{c.Group, c.TopicPartition()}] = c
	r.mu.Unlock()
	row.Emitted = true
	r.active.Delivered(ctx, d.At)
	if m := r.t.metrics; m != nil {
		// MM2's checkpoint-latency-ms: the acknowledgement against the checkpoint's timestamp, which is when the
		// upstream offsets were read (readAt); the report's arrival, not when this loop got to it.
		m.CheckpointLatency(r.checkpointLabels(c.Group, c.Topic, c.Partition), d.At.Sub(row.ReadAt))
	}
	return true
}

// checkpointLabels names a checkpointed group partition (downstream topic) in the metrics.
func (r *checkpointRun) checkpointLabels(group, topic string, partition int32) metrics.CheckpointLabels {
	return metrics.CheckpointLabels{Connector: r.t.id.Connector, SourceAlias: r.sourceAlias, TargetAlias: r.targetAlias,
		Group: group, Topic: topic, Partition: partition}
}

// removeMetrics removes the series of the checkpoints this run wrote. Key by key, not the whole connector:
// another task of the connector may be running on this worker, and its series must stay.
func (r *checkpointRun) removeMetrics() {
	m := r.t.metrics
	if m == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for k := range r.last {
		m.RemoveCheckpoint(r.checkpointLabels(k.group, k.tp.Topic, k.tp.Partition))
	}
}

// setNotice and clearNotice keep the task's status notices; report publishes them when they changed.
func (r *checkpointRun) setNotice(key string, n kmtype.Notice) {
	if r.notices == nil {
		r.notices = map[string]kmtype.Notice{}
	}
	r.notices[key] = n
}

func (r *checkpointRun) clearNotice(key string) { delete(r.notices, key) }

func (r *checkpointRun) report(ctx context.Context) error {
	var list []kmtype.Notice
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(r.notices)) {
		list = append(list, r.notices[k])
		b.WriteString(k + r.notices[k].Message)
	}
	if b.String() == r.reported {
		return nil
	}
	if err := r.env.Report(ctx, list); err != nil {
		return err
	}
	r.reported = b.String()
	return nil
}

// syncGroupOffsets commits the latest checkpoints to the target's consumer groups (sync.group.offsets): only to
// a group that does not exist there or has no member (checked here, and refused by the broker otherwise), and
// only forward of what the group has committed there.
func (r *checkpointRun) syncGroupOffsets(ctx context.Context) error {
	converted := map[string][]kafka.GroupOffset{}
	r.mu.Lock()
	for k, c := range r.last {
		converted[k.group] = append(converted[k.group], kafka.GroupOffset{Topic: c.Topic, Partition: c.Partition, Offset: c.DownstreamOffset, Metadata: c.Metadata})
	}
	r.mu.Unlock()
	if len(converted) == 0 {
		return nil
	}
	groups := slices.Sorted(maps.Keys(converted))
	states, err := r.target.DescribeGroups(ctx, groups)
	if err != nil {
		return fmt.Errorf("describe target groups: %w", err)
	}
	for _, g := range groups {
		st := states[g]
		if st.Members > 0 || (st.Exists && st.State != "Empty" && st.State != "Dead") {
			r.log.Debug("not syncing the offsets of a group active on the target", "group", g, "state", st.State, "members", st.Members)
			continue
		}
		write := converted[g]
		if st.Exists {
			have, failed, err := r.target.GroupOffsets(ctx, []string{g})
			if err != nil {
				return fmt.Errorf("read target offsets of group %s: %w", g, err)
			}
			if err := failed[g]; err != nil {
				r.limit.Log(ctx, r.log, slog.LevelWarn, "sync-group:"+g, "cannot read the target offsets of a group", "group", g, "error", err)
				continue
			}
			current := map[mirror.TopicPartition]int64{}
			for _, o := range have[g] {
				current[mirror.TopicPartition{Topic: o.Topic, Partition: o.Partition}] = o.Offset
			}
			write = slices.DeleteFunc(slices.Clone(write), func(o kafka.GroupOffset) bool {
				cur, ok := current[mirror.TopicPartition{Topic: o.Topic, Partition: o.Partition}]
				return ok && cur >= o.Offset // only forward
			})
		}
		if len(write) == 0 {
			continue
		}
		if !r.env.Lease().Valid() {
			return nil
		}
		slices.SortFunc(write, func(a, b kafka.GroupOffset) int {
			return cmp.Or(strings.Compare(a.Topic, b.Topic), cmp.Compare(a.Partition, b.Partition))
		})
		if err := r.target.AlterGroupOffsets(ctx, g, write); err != nil {
			if kafka.IsGroupActive(err) {
				r.log.Info("a consumer joined the group on the target meanwhile; its offsets are left alone", "group", g)
				continue
			}
			r.limit.Log(ctx, r.log, slog.LevelWarn, "sync-group:"+g, "committing translated offsets to the target group failed", "group", g, "error", err)
			continue
		}
		r.log.Debug("synced group offsets to the target", "group", g, "partitions", len(write))
	}
	return nil
}
