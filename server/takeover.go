package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/mm2file"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// takeoverTimeout bounds the reading of one flow's MM2 offsets topic.
const takeoverTimeout = time.Minute

// takeover is what a connector the declaration is about to create takes over from Java MM2.
type takeover struct {
	offsets []kmtype.Offset
	took    *store.Takeover
}

// takeoverOffsets reads, for every enabled source connector the declaration is about to create, the source
// offsets Java MM2 committed for its flow (mm2-offsets.<source>.internal on the target, connector
// MirrorSourceConnector): stored with the new connector, they make its tasks start where MM2 stopped instead
// of copying the topics again. A flow without that topic starts afresh. A topic that cannot be read fails the
// start, since creating the connector without its offsets would copy everything again; the file's
// kmirror.mm2.takeover=false skips all this. For a checkpoint connector it counts the checkpoints MM2 left on
// its checkpoints topic, which its tasks continue from, so that its status can say so.
func takeoverOffsets(ctx context.Context, st *store.Store, clients clientconfig.Options, cs []mm2file.Connector, log *slog.Logger,
) (map[string]takeover, error) {
	out := map[string]takeover{}
	for _, c := range cs {
		if (c.Class != mirrorconfig.SourceConnectorClass && c.Class != mirrorconfig.CheckpointConnectorClass) || !c.Enabled() {
			continue
		}
		if _, err := st.GetConnector(ctx, c.Name); !errors.Is(err, store.ErrNotFound) {
			if err != nil {
				return nil, err
			}
			continue // declared before: its own offsets rule
		}
		if c.Class == mirrorconfig.CheckpointConnectorClass {
			if took := readMM2Checkpoints(ctx, clients, c, log); took != nil {
				out[c.Name] = takeover{took: took}
			}
			continue
		}
		offsets, err := readMM2Offsets(ctx, clients, c, log)
		if err != nil {
			return nil, fmt.Errorf("take over %s from Java MM2: %w (set %s=false in the file to start it without MM2's offsets)",
				c.Name, err, mm2file.KeyTakeover)
		}
		if len(offsets) > 0 {
			out[c.Name] = takeover{offsets: offsets, took: &store.Takeover{Topic: mm2offsets.Topic(c.Flow.Source), Partitions: len(offsets)}}
		}
	}
	return out, nil
}

// readMM2Checkpoints counts the checkpoints on the flow's checkpoints topic (nil: none, or the topic cannot be
// read — the connector needs nothing from here to continue, so that only goes unreported).
func readMM2Checkpoints(ctx context.Context, clients clientconfig.Options, c mm2file.Connector, log *slog.Logger) *store.Takeover {
	p, _ := mirrorconfig.LookupPlugin(c.Class)
	cfg, err := clients.Client(clientconfig.CheckpointsConsumer, c.Config, mirrorconfig.ConfigDef(p).Has, nil)
	if err != nil {
		return nil
	}
	policy, err := mirror.NewReplicationPolicy(c.Config)
	if err != nil {
		return nil
	}
	topic := policy.CheckpointsTopic(c.Flow.Source)
	latest := map[string]map[mirror.TopicPartition]bool{}
	readCtx, cancel := context.WithTimeout(ctx, takeoverTimeout)
	defer cancel()
	_, err = kafka.ReadTopic(readCtx, cfg.Props, topic, log, func(r kafka.Record) error {
		if cp, err := mirror.DecodeCheckpoint(r.Key(), r.Value()); err == nil && r.Partition() == 0 {
			if latest[cp.Group] == nil {
				latest[cp.Group] = map[mirror.TopicPartition]bool{}
			}
			latest[cp.Group][cp.TopicPartition()] = true
		}
		return nil
	})
	if err != nil || len(latest) == 0 {
		if err != nil && !kafka.IsUnknownTopic(err) {
			log.Warn("could not count Java MM2's checkpoints: the checkpoint connector continues from them all the same",
				"connector", c.Name, "topic", topic, "error", err)
		}
		return nil
	}
	took := &store.Takeover{Topic: topic, Groups: len(latest)}
	for _, tps := range latest {
		took.Partitions += len(tps)
	}
	log.Info("taking over from Java MM2: the checkpoint connector continues from its checkpoints", "connector", c.Name, "topic", topic,
		"groups", took.Groups, "partitions", took.Partitions)
	return took
}

func readMM2Offsets(ctx context.Context, clients clientconfig.Options, c mm2file.Connector, log *slog.Logger) ([]kmtype.Offset, error) {
	p, _ := mirrorconfig.LookupPlugin(c.Class)
	cfg, err := clients.Client(clientconfig.CheckpointsConsumer, c.Config, mirrorconfig.ConfigDef(p).Has, nil)
	if err != nil {
		return nil, err
	}
	topic := mm2offsets.Topic(c.Flow.Source)
	col := mm2offsets.NewCollector(mm2offsets.DefaultConnector, c.Flow.Source)
	readCtx, cancel := context.WithTimeout(ctx, takeoverTimeout)
	defer cancel()
	read, err := kafka.ReadTopic(readCtx, cfg.Props, topic, log, func(r kafka.Record) error {
		col.Add(r.Key(), r.Value())
		return nil
	})
	if kafka.IsUnknownTopic(err) {
		log.Info("no Java MM2 offsets to take over: the connector starts afresh", "connector", c.Name, "topic", topic)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s on the target cluster: %w", topic, err)
	}
	found := col.Offsets()
	stats := col.Stats()
	log.Info("taking over from Java MM2: its committed source offsets start the connector", "connector", c.Name, "topic", topic,
		"records", read.Records, "partitions", len(found), "malformed", stats.Malformed)
	out := make([]kmtype.Offset, 0, len(found))
	for _, o := range found {
		out = append(out, kmtype.Offset{
			Partition: map[string]any{"cluster": o.Source.Cluster, "partition": o.Source.Partition, "topic": o.Source.Topic},
			Offset:    map[string]any{"offset": o.Offset},
		})
	}
	return out, nil
}
