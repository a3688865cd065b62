package source

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// A STOPPED MirrorSourceConnector has no tasks, yet a source topic deleted while it is stopped must be judged
// when it runs again on what was last seen of it, as a paused connector's is: the run holding its unit asks
// the source for the end offsets of the partitions whose stats the stop kept, every pausedStatsInterval, in
// one batched ListOffsets request (and one DescribeTopics to leave out topics that are gone or re-created).

var _ connectors.StoppedPlugin = (*Plugin)(nil)

// The tasks of a connector being stopped commit their last offsets after the stop took their task set away:
// the first stoppedQuickLooks looks come a second apart, so that the positions kept reflect those commits
// within seconds of the stop.
const stoppedQuickLooks = 10

// WatchStopped implements connectors.StoppedPlugin.
func (p *Plugin) WatchStopped(ctx context.Context, env tasks.StoppedEnv, connector string, parsed connectors.Config) error {
	log := env.Logger()
	cfg := newConfig(parsed)
	if !cfg.Enabled {
		return nil // nothing replicates: there is nothing to judge either
	}
	props, err := cfg.ClientProps(clientconfig.SourceAdmin, connector, -1)
	if err != nil {
		log.Warn("stopped: cannot watch the source topics' end offsets", "error", err)
		return nil
	}
	readCommitted := false
	if cp, err := cfg.ClientProps(clientconfig.ReplicationConsumer, connector, 0); err == nil {
		readCommitted = cp["isolation.level"] == "read_committed"
	}
	admin, err := kafka.NewAdmin(props, log)
	if err != nil {
		log.Warn("stopped: cannot watch the source topics' end offsets", "error", err)
		return nil
	}
	defer admin.Close()
	admin.Timeout = 10 * time.Second
	w := &stoppedWatch{env: env, admin: admin, alias: cfg.SourceAlias(), readCommitted: readCommitted, ids: map[string]string{}}
	for {
		more, err := w.look(ctx)
		if err != nil || !more {
			return err
		}
		wait := pausedStatsInterval
		if w.looks < stoppedQuickLooks {
			wait = time.Second
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
	}
}

// sourceLogReader is what the watches of a paused or stopped connector ask of the source cluster: the shapes of
// topics and their partitions' log offsets, in one request each; *kafka.Admin answers it.
type sourceLogReader interface {
	topicShapeReader
	LogOffsets(ctx context.Context, parts []kafka.PartitionID, readCommitted, starts bool) (map[kafka.PartitionID]kafka.LogOffsets, map[kafka.PartitionID]error, error)
}

// stoppedWatch is what a STOPPED connector's watch keeps between its looks.
type stoppedWatch struct {
	env           tasks.StoppedEnv
	admin         sourceLogReader
	alias         string
	readCommitted bool
	ids           map[string]string // topic -> the id of the incarnation watched (adopted at the first look)
	failing       bool
	looks         int
}

// look refreshes the end offsets of the kept partitions whose topic is still the one their offsets belong to.
// It tells whether there is anything to watch; only a lost unit is an error.
func (w *stoppedWatch) look(ctx context.Context) (bool, error) {
	log := w.env.Logger()
	stats, err := w.env.PartitionStats(ctx)
	if err != nil {
		w.warn(ctx, "reading the partitions' stats failed, will retry", err)
		return true, nil
	}
	w.looks++
	if len(stats) == 0 {
		// The stopping tasks' last reports may come as late as the stop budget allows: keep looking for them.
		return true, nil
	}
	offsets, err := w.env.ReadOffsets(ctx)
	if err != nil {
		w.warn(ctx, "reading the committed offsets failed, will retry", err)
		return true, nil
	}
	committed := clusterOffsets(offsets, w.alias)
	// Every kept partition's position follows its committed offset, also where the topic is gone: a task that
	// finds it re-created trusts an end only at its position. It is recorded before the source is asked, so that
	// a source slow to answer cannot hold it back.
	positions := make([]kmtype.PartitionEnd, 0, len(stats))
	for _, st := range stats {
		e := kmtype.PartitionEnd{Topic: st.Topic, Partition: st.Partition, Next: -1, End: -1}
		if c, ok := committed[mirror.TopicPartition{Topic: st.Topic, Partition: st.Partition}]; ok {
			e.Next = c.offset + 1
		}
		positions = append(positions, e)
	}
	if err := w.env.RefreshPartitionEnds(ctx, positions); err != nil {
		if errors.Is(err, kmtype.ErrFenced) {
			return false, err
		}
		w.warn(ctx, "recording the committed positions failed, will retry", err)
		return true, nil
	}
	ends, err := w.ends(ctx, stats, committed)
	if err != nil {
		w.warn(ctx, "reading the source's end offsets failed, will retry", err)
		return true, nil
	}
	for i := range positions {
		if end, ok := ends[kafka.PartitionID{Topic: positions[i].Topic, Partition: positions[i].Partition}]; ok {
			positions[i].End = end
		}
	}
	if err := w.env.RefreshPartitionEnds(ctx, positions); err != nil {
		if errors.Is(err, kmtype.ErrFenced) {
			return false, err
		}
		w.warn(ctx, "recording the end offsets failed, will retry", err)
		return true, nil
	}
	if w.failing {
		w.failing = false
		log.Info("stopped: watching the source topics' end offsets works again", "source", w.alias)
	}
	return true, nil
}

// ends asks the source for the end offsets of the kept partitions whose topic is still the incarnation their
// offsets belong to (committed's source ids; "" or none: the one seen at the first look): a deleted topic's partition
// would fail the whole request, and a re-created one's end is not the end of what the stats describe.
func (w *stoppedWatch) ends(ctx context.Context, stats []kmtype.PartitionStat, committed map[mirror.TopicPartition]storedOffset) (map[kafka.PartitionID]int64, error) {
	topics := map[string]bool{}
	for _, st := range stats {
		topics[st.Topic] = true
	}
	shapes, err := w.admin.TopicShapes(ctx, slices.Sorted(maps.Keys(topics)))
	if err != nil {
		return nil, err
	}
	var live []kafka.PartitionID
	for _, st := range stats {
		shape, ok := shapes[st.Topic]
		if !ok || int(st.Partition) >= shape.Partitions {
			continue // deleted: its stats keep the end last seen
		}
		want := committed[mirror.TopicPartition{Topic: st.Topic, Partition: st.Partition}].sourceID
		if want == "" {
			if w.ids[st.Topic] == "" {
				w.ids[st.Topic] = shape.ID
			}
			want = w.ids[st.Topic]
		}
		if shape.ID == want {
			live = append(live, kafka.PartitionID{Topic: st.Topic, Partition: st.Partition})
		}
	}
	logs, _, err := w.admin.LogOffsets(ctx, live, w.readCommitted, false)
	if err != nil {
		return nil, err
	}
	out := make(map[kafka.PartitionID]int64, len(logs))
	for id, lo := range logs {
		out[id] = lo.End
	}
	return out, nil
}

// warn logs the first of a run of failed looks.
func (w *stoppedWatch) warn(ctx context.Context, msg string, err error) {
	if w.failing || ctx.Err() != nil {
		return
	}
	w.failing = true
	w.env.Logger().Warn("stopped: "+msg, "source", w.alias, "error", err)
}
