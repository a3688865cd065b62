package source

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/lograte"
)

// How often a running source task checks that its source topics and remote topics are still the ones it
// replicates: a deleted and re-created topic has a new topic id (KIP-516), while its offsets start over and
// may overlap the old ones, so an offset alone cannot tell.
const sourceIdentityInterval = 5 * time.Second

// identityWatch checks that a run's source topics and remote topics are still the ones it replicates, by their
// topic ids: it marks partitions whose source topic is gone, starts over those whose topic was re-created
// (reporting what the deleted topic held that was never replicated), and says when a remote topic was deleted
// or re-created on the target. Its checks run at a pipeline's start, from the watch beside the poll loop, and
// when a fetch finds its position out of range; recreated hands the poll loop what a running check found.
type identityWatch struct {
	parts                    []*sourcePartition
	bySource                 map[string][]*sourcePartition // source topic -> by partition number
	byRemote                 map[string][]*sourcePartition // remote topic -> by partition number
	sourceAlias, targetAlias string
	notices                  *noticeBoard
	log                      *slog.Logger
	limit                    *lograte.Limiter
	remoteIDs                map[string]string             // remote topic -> the topic id it had when first seen
	recreated                atomic.Pointer[identityCheck] // source topics found re-created; the pipeline restarts
}

// topicIDReader reads the ids of topics (KIP-516) on a cluster; *kafka.Admin answers it.
type topicIDReader interface {
	TopicIDs(ctx context.Context, topics []string) (map[string]string, error)
}

// topicShapeReader reads the ids and partition counts of topics on a cluster; *kafka.Admin answers it.
type topicShapeReader interface {
	TopicShapes(ctx context.Context, topics []string) (map[string]kafka.TopicShape, error)
}

// partitionStatsReader is what loadSeenEnds asks of the runtime; tasks.TaskEnv answers it.
type partitionStatsReader interface {
	PartitionStats(ctx context.Context) ([]kmtype.PartitionStat, error)
}

// identityCheck is the outcome of one check of topic ids.
type identityCheck struct {
	recreated []*sourcePartition // partitions whose source topic has a new id (p.newID says which)
}

// checkSources compares the source topic id of every partition with the one its offsets belong to. A
// partition without a known id adopts the current one. At start (startup) nothing can be known about what the
// deleted topic held beyond the committed offset and the end offset last published (seenEnd); while running,
// the end offset last seen tells what was lost. A partition whose topic is gone, or was re-created without it
// (fewer partitions), is marked gone instead: the connector drops it from its plan once the task has replicated
// what the source still serves of it, and reports what was lost.
func (w *identityWatch) checkSources(ctx context.Context, admin topicShapeReader, consumer sourceReader, startup bool) (identityCheck, error) {
	topics := slices.Sorted(maps.Keys(w.bySource))
	shapes, err := admin.TopicShapes(ctx, topics)
	if err != nil {
		return identityCheck{}, fmt.Errorf("read the ids of source topics on %s: %w", w.sourceAlias, err)
	}
	var out identityCheck
	for _, p := range w.parts {
		shape, ok := shapes[p.tp.Topic]
		cur := shape.ID
		var low, high int64
		if !startup && consumer != nil {
			if l, h, err := consumer.CachedWatermarks(p.tp.Topic, p.tp.Partition); err == nil {
				low, high = l, h
			}
		}
		p.mu.Lock()
		switch {
		case !ok, p.sourceID != "" && p.sourceID != cur && int(p.tp.Partition) >= shape.Partitions:
			if !p.gone {
				p.gone = true
				w.log.Info("source partition gone: replicating what the source still serves of it until the connector drops it",
					"topic", p.tp.Topic, "partition", p.tp.Partition, "recreated", ok)
			}
			p.mu.Unlock()
			w.notices.notice("gone:"+p.tp.String(), partitionNotice(NoticeSourceTopicMissing,
				fmt.Sprintf("%s topic %s partition %d no longer exists: this task replicates what the source still serves of it; the connector drops it at its next topic refresh and reports any records that were not replicated",
					w.sourceAlias, p.tp.Topic, p.tp.Partition), p.tp.Topic, p.tp.Partition, 0, -1))
			continue
		}
		p.gone = false
		w.notices.clearNotice("gone:" + p.tp.String())
		if low > 0 && p.sourceID == cur {
			p.logStart = low
		}
		switch {
		case p.sourceID == "":
			p.sourceID, p.idDirty = cur, true
		case p.sourceID != cur:
			p.newID = cur
			out.recreated = append(out.recreated, p)
		case high > 0:
			p.seenEnd = max(p.seenEnd, high)
		}
		p.mu.Unlock()
	}
	return out, nil
}

// loadSeenEnds starts each partition's seenEnd at the end offset its last published stats gave (by an earlier
// run, running or paused), so that a topic deleted while no pipeline read it is judged on what was last seen of
// it. Stats whose position lies before the committed offset belong to another incarnation of the topic (the
// one a pipeline started over in) and are left out. Without stats the end stays unknown.
func (w *identityWatch) loadSeenEnds(ctx context.Context, env partitionStatsReader) {
	stats, err := env.PartitionStats(ctx)
	if err != nil {
		w.log.Debug("cannot read the partitions' last stats; their end offsets are unknown until seen", "error", err)
		return
	}
	for _, st := range stats {
		p := lookup(w.bySource, st.Topic, st.Partition)
		if p == nil || st.EndOffset == nil || *st.EndOffset <= 0 {
			continue
		}
		p.mu.Lock()
		if st.ReplicatedOffset >= p.acked+1 {
			p.seenEnd, p.seenAt = *st.EndOffset, st.UpdatedAt
		}
		p.mu.Unlock()
	}
}

// restartRecreated starts each partition of a re-created source topic over at the new topic's beginning (or
// as auto.offset.reset says), and reports what the deleted topic held that was never replicated — only when
// something was. What it held is known from two sources: the end offset last seen (by this task's watches, or
// as the partition's last published stats said when this run started: a paused run's every few seconds), and
// how far this task's pipelines had read it (p.next and p.readEnd: no poll loop runs here). The second matters
// across pipeline restarts: the records an ended pipeline had read but the target had not confirmed are gone
// with the topic, and the watch, every few seconds, may never have seen its end that far. What nobody read
// cannot be known: records written to the topic after the last look at its end and deleted with it. The
// report names that tail too (from which offset on it would have been). A deletion found when a pipeline starts
// with no end offset ever seen is reported even when nothing is known to be lost (as a re-creation, not as a
// loss): the topic may have grown while no pipeline read it.
func (w *identityWatch) restartRecreated(parts []*sourcePartition, startup bool) {
	for _, p := range parts {
		acked, _ := p.progress()
		p.mu.Lock()
		seenEnd, seenAt, oldID, newID := p.seenEnd, p.seenAt, p.sourceID, p.newID
		p.mu.Unlock()
		readEnd := max(p.next, p.readEnd) // -1: this task has not read the partition since it started
		end := max(seenEnd, readEnd)
		base := fmt.Sprintf("%s topic %s partition %d was deleted and re-created (topic id %s, now %s)",
			w.sourceAlias, p.tp.Topic, p.tp.Partition, oldID, newID)
		switch {
		case end > acked+1:
			var inFlight string
			if readEnd > acked+1 {
				inFlight = fmt.Sprintf(" (records %d to %d had been read and were in flight when a pipeline restarted: any of them the target wrote all the same are on it)",
					acked+1, readEnd-1)
			}
			msg := fmt.Sprintf("DATA NOT REPLICATED: %s; records %d to %d of the deleted topic were not confirmed by the target before it was deleted and cannot be read again%s, nor can any it held from offset %d on, which was never seen; the new topic is replicated from offset 0",
				base, acked+1, end-1, inFlight, end)
			w.log.Error(msg, "topic", p.tp.Topic, "partition", p.tp.Partition, "lost_from", acked+1, "lost_to", end-1)
			w.notices.notice(fmt.Sprintf("gap:%s-%d:recreated:%s", p.tp.Topic, p.tp.Partition, newID),
				partitionNotice(NoticeDataNotReplicated, msg, p.tp.Topic, p.tp.Partition, acked+1, end-1))
		case startup && end <= 0:
			msg := fmt.Sprintf("%s; the deletion was found when a pipeline of this task started, and no end offset of the deleted topic had been seen since offset %d was replicated: any records it held from offset %d on were not replicated, and whether it held any cannot be known; the new topic is replicated from its beginning",
				base, acked, acked+1)
			w.log.Warn(msg, "topic", p.tp.Topic, "partition", p.tp.Partition, "committed", acked)
			w.notices.notice(fmt.Sprintf("recreated:%s-%d:%s", p.tp.Topic, p.tp.Partition, newID),
				partitionNotice(NoticeSourceTopicRecreated, msg, p.tp.Topic, p.tp.Partition, acked+1, -1))
		default:
			seen := "as this task last saw it"
			if !seenAt.IsZero() && readEnd < 0 {
				seen = "as last seen at " + seenAt.UTC().Format(time.RFC3339)
			}
			w.log.Info(base+"; every record of the deleted topic had been replicated ("+seen+"); the new topic is replicated from its beginning",
				"topic", p.tp.Topic, "partition", p.tp.Partition, "end", end)
		}
		p.restartAt(newID)
	}
}

// checkRemotes notices remote topics that were deleted, or deleted and re-created, on the target: what was
// replicated to a deleted remote topic is gone from the target, and the status says so until the connector's
// next refresh has created it again (for a deleted one) and for the rest of the run (for a re-created one).
func (w *identityWatch) checkRemotes(ctx context.Context, admin topicIDReader) error {
	remotes := slices.Sorted(maps.Keys(w.byRemote))
	ids, err := admin.TopicIDs(ctx, remotes)
	if err != nil {
		return fmt.Errorf("read the ids of remote topics on %s: %w", w.targetAlias, err)
	}
	for _, remote := range remotes {
		cur, ok := ids[remote]
		known := w.remoteIDs[remote]
		missingKey := "remote-missing:" + remote
		switch {
		case !ok:
			if known != "" {
				w.notices.notice(missingKey, kmtype.Notice{Kind: NoticeRemoteTopicMissing, Topic: remote,
					Message: fmt.Sprintf("remote topic %s no longer exists on %s: its records wait (and are retried) until the connector's next topic refresh creates it again; what was replicated to it is gone from %s",
						remote, w.targetAlias, w.targetAlias)})
			}
		case known == "":
			w.remoteIDs[remote] = cur
		case known != cur:
			w.notices.clearNotice(missingKey)
			msg := fmt.Sprintf("remote topic %s on %s was deleted and re-created (topic id %s, now %s): the records replicated to it before are gone from %s; replication goes on from the committed offsets (reset the connector's offsets to replicate everything again)",
				remote, w.targetAlias, known, cur, w.targetAlias)
			w.log.Error(msg, "topic", remote)
			w.notices.notice("remote-recreated:"+remote+":"+cur, kmtype.Notice{Kind: NoticeRemoteTopicRecreated, Topic: remote, Message: msg})
			w.remoteIDs[remote] = cur
		default:
			w.notices.clearNotice(missingKey)
		}
	}
	return nil
}

// watch checks topic ids every sourceIdentityInterval until ctx ends; it asks the poll loop to
// restart the pipeline when a source topic was re-created.
func (w *identityWatch) watch(ctx context.Context, source topicShapeReader, target topicIDReader, consumer sourceReader) {
	tick := time.NewTicker(sourceIdentityInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		check, err := w.checkSources(ctx, source, consumer, false)
		if err != nil {
			if ctx.Err() == nil {
				w.limit.Log(ctx, w.log, slog.LevelWarn, "identity-source", "checking source topic ids failed", "error", err)
			}
		} else if len(check.recreated) > 0 {
			w.recreated.Store(&check)
			return // the pipeline restarts; the next one watches again
		}
		if err := w.checkRemotes(ctx, target); err != nil && ctx.Err() == nil {
			w.limit.Log(ctx, w.log, slog.LevelWarn, "identity-target", "checking remote topic ids failed", "error", err)
		}
	}
}
