package checkpoint

import (
	"context"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// tailOffsetSyncs feeds the offset-sync store from partition 0 of the offset-syncs topic, from its beginning,
// until ctx ends (MM2's OffsetSyncStore on a KafkaBasedLog). The store answers only once the initial read
// reached the end. Offset syncs are the fallback for partitions kmirror's offset map does not cover (a topic
// replicated by Java MM2, or positions older than the map keeps).
func (r *checkpointRun) tailOffsetSyncs(ctx context.Context) {
	topic, role := r.policy.OffsetSyncsTopic(r.targetAlias), clientconfig.OffsetSyncsConsumer
	if r.t.cfg.OffsetSyncsTopicLocation == mirrorconfig.OffsetSyncsLocationTarget {
		topic = r.policy.OffsetSyncsTopic(r.sourceAlias)
	}
	for ctx.Err() == nil {
		err := r.readOffsetSyncs(ctx, topic, role)
		if ctx.Err() != nil {
			return
		}
		r.limit.Log(ctx, r.log, slog.LevelWarn, "offset-syncs", "reading the offset-syncs topic failed, will retry", "topic", topic, "error", err)
		select {
		case <-ctx.Done():
			return
		case <-time.After(checkpointRetryDelay):
		}
	}
}

func (r *checkpointRun) readOffsetSyncs(ctx context.Context, topic string, role clientconfig.Role) error {
	props, err := r.t.cfg.ClientProps(role, r.t.id.Connector, -1)
	if err != nil {
		return err
	}
	if props["group.id"] == "" {
		props["group.id"] = "kmirror-offset-syncs-reader" // required by the client, never joined
	}
	props["enable.auto.commit"] = "false"
	props["auto.offset.reset"] = "earliest"
	c, err := kafka.NewConsumer(props, r.log)
	if err != nil {
		return err
	}
	defer c.Close()
	// Start where the store left off, so a re-read after an error does not index syncs twice.
	if err := c.Assign([]kafka.Start{{Topic: topic, Partition: 0, Offset: r.syncsNext}}); err != nil {
		return err
	}
	var end int64 = -1
	if !r.syncsReady {
		_, high, err := c.Watermarks(topic, 0, 10*time.Second)
		if err != nil {
			return err
		}
		end = high
		if r.syncsNext >= end {
			r.syncs.ReadToEnd()
			r.syncsReady = true
		}
	}
	for ctx.Err() == nil {
		rec, ok, err := c.Poll(500 * time.Millisecond)
		if err != nil {
			if kafka.IsRetriable(err) {
				continue
			}
			return err
		}
		if !ok {
			continue
		}
		r.syncsNext = rec.Offset() + 1
		if rec.Key() != nil && rec.Value() != nil {
			if s, err := mirror.DecodeOffsetSync(rec.Key(), rec.Value()); err == nil {
				r.syncs.Add(s)
			}
		}
		if !r.syncsReady && r.syncsNext >= end {
			r.syncs.ReadToEnd()
			r.syncsReady = true
		}
	}
	return nil
}
