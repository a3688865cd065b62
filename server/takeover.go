package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/mm2file"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/store"
)

// takeoverTimeout bounds the reading of one flow's MM2 offsets topic.
const takeoverTimeout = time.Minute

// takeoverOffsets reads, for every enabled source connector the declaration is about to create, the source
// offsets Java MM2 committed for its flow (mm2-offsets.<source>.internal on the target, connector
// MirrorSourceConnector): stored with the new connector, they make its tasks start where MM2 stopped instead
// of copying the topics again. A flow without that topic starts afresh. A topic that cannot be read fails the
// start, since creating the connector without its offsets would copy everything again; the file's
// kmirror.mm2.takeover=false skips all this.
func takeoverOffsets(ctx context.Context, st *store.Store, clients clientconfig.Options, cs []mm2file.Connector, log *slog.Logger,
) (map[string][]store.Offset, error) {
	out := map[string][]store.Offset{}
	for _, c := range cs {
		if c.Class != mirrorconfig.SourceConnectorClass || !c.Enabled() {
			continue
		}
		if _, err := st.GetConnector(ctx, c.Name); !errors.Is(err, store.ErrNotFound) {
			if err != nil {
				return nil, err
			}
			continue // declared before: its own offsets rule
		}
		offsets, err := readMM2Offsets(ctx, clients, c, log)
		if err != nil {
			return nil, fmt.Errorf("take over %s from Java MM2: %w (set %s=false in the file to start it without MM2's offsets)",
				c.Name, err, mm2file.KeyTakeover)
		}
		if len(offsets) > 0 {
			out[c.Name] = offsets
		}
	}
	return out, nil
}

func readMM2Offsets(ctx context.Context, clients clientconfig.Options, c mm2file.Connector, log *slog.Logger) ([]store.Offset, error) {
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
	out := make([]store.Offset, 0, len(found))
	for _, o := range found {
		out = append(out, store.Offset{
			Partition: map[string]any{"cluster": o.Source.Cluster, "partition": o.Source.Partition, "topic": o.Source.Topic},
			Offset:    map[string]any{"offset": o.Offset},
		})
	}
	return out, nil
}
