// Package loadgen produces a steady stream of records into a Kafka topic, for the demo (`kmirror loadgen`,
// `scripts/run --demo`) and for tests that need records flowing while they watch replication.
package loadgen

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// Config says where to produce and how fast.
type Config struct {
	Bootstrap  string  // the cluster's bootstrap servers
	Topic      string  // created with Partitions partitions if missing
	Partitions int     // 3 when zero
	Rate       float64 // records per second; 100 when zero
	ValueSize  int     // bytes per value, at least the record's text; 100 when zero
	// Group, when set, is committed every second at the end of what was produced to each partition: the
	// position of an application that keeps up, for the checkpoint connector to translate.
	Group  string
	Logger *slog.Logger
}

// Stats counts what Run produced.
type Stats struct {
	sent, acked, failed atomic.Int64
}

// Sent, Acked and Failed are the records handed to the producer, acknowledged by the cluster, and failed.
func (s *Stats) Sent() int64   { return s.sent.Load() }
func (s *Stats) Acked() int64  { return s.acked.Load() }
func (s *Stats) Failed() int64 { return s.failed.Load() }

// PrintEvery writes the counts to w every interval until ctx is done.
func (s *Stats) PrintEvery(ctx context.Context, w io.Writer, interval time.Duration) {
	every(ctx, interval, func() {
		fmt.Fprintf(w, "loadgen: %d sent, %d acknowledged, %d failed\n", s.Sent(), s.Acked(), s.Failed())
	})
}

// tick is how often Run produces; records are spread evenly at any rate above 1/tick.
const tick = 20 * time.Millisecond

// Run creates the topic if needed and produces at cfg.Rate until ctx is done, then flushes what is in flight.
// Records are keyed round-robin ("key-N"), so they spread over the partitions. stats may be nil.
func Run(ctx context.Context, cfg Config, stats *Stats) error {
	if cfg.Bootstrap == "" || cfg.Topic == "" {
		return errors.New("loadgen: bootstrap servers and topic are required")
	}
	if cfg.Partitions <= 0 {
		cfg.Partitions = 3
	}
	if cfg.Rate <= 0 {
		cfg.Rate = 100
	}
	if cfg.ValueSize <= 0 {
		cfg.ValueSize = 100
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if stats == nil {
		stats = &Stats{}
	}
	partitions, err := ensureTopic(ctx, cfg, log)
	if err != nil {
		return err
	}
	group := &groupCommitter{next: map[int32]int64{}}
	p, err := kafka.NewProducer(map[string]string{"bootstrap.servers": cfg.Bootstrap, "linger.ms": "5", "enable.idempotence": "true"},
		log, func(d kafka.Delivery) {
			if d.Err != nil {
				stats.failed.Add(1)
				return
			}
			stats.acked.Add(1)
			group.delivered(d)
		})
	if err != nil {
		return fmt.Errorf("loadgen: producer: %w", err)
	}
	defer p.Close()
	log.Info("producing", "topic", cfg.Topic, "rate", cfg.Rate, "bootstrap", cfg.Bootstrap)
	committed := make(chan struct{})
	if cfg.Group != "" {
		go func() { defer close(committed); group.run(ctx, cfg, log) }()
	} else {
		close(committed)
	}

	padding := strings.Repeat("x", cfg.ValueSize)
	t := time.NewTicker(tick)
	defer t.Stop()
	start := time.Now()
	var n int64
	for {
		select {
		case <-ctx.Done():
			flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
			defer cancel()
			p.Flush(flushCtx)
			<-committed
			return nil
		case now := <-t.C:
			// Produce what the rate owes since the start, so a slow tick catches up instead of lowering the rate.
			due := int64(now.Sub(start).Seconds() * cfg.Rate)
			for ; n < due; n++ {
				key := "key-" + strconv.FormatInt(n, 10)
				value := key + " " + now.UTC().Format(time.RFC3339Nano) + " "
				if len(value) < cfg.ValueSize {
					value += padding[:cfg.ValueSize-len(value)]
				}
				if err := p.Produce(cfg.Topic, int32(n%int64(partitions)), []byte(key), []byte(value), nil, now, nil); err != nil {
					// A full local queue: try again next tick rather than fail the stream.
					break
				}
				stats.sent.Add(1)
			}
			if err := p.Fatal(); err != nil {
				return fmt.Errorf("loadgen: producer failed: %w", err)
			}
		}
	}
}

// ensureTopic creates the topic unless it exists and returns its partition count (an existing topic keeps its
// own).
func ensureTopic(ctx context.Context, cfg Config, log *slog.Logger) (int, error) {
	a, err := kafka.NewAdmin(map[string]string{"bootstrap.servers": cfg.Bootstrap}, log)
	if err != nil {
		return 0, fmt.Errorf("loadgen: admin client: %w", err)
	}
	defer a.Close()
	res, err := a.CreateTopics(ctx, []kafka.NewTopic{{Name: cfg.Topic, Partitions: cfg.Partitions, ReplicationFactor: -1}})
	if err != nil {
		return 0, fmt.Errorf("loadgen: create topic %s: %w", cfg.Topic, err)
	}
	if err := res[cfg.Topic]; err != nil && !strings.Contains(err.Error(), "already exists") {
		return 0, fmt.Errorf("loadgen: create topic %s: %w", cfg.Topic, err)
	}
	// A topic just created may take a moment to show in the metadata the admin client reads.
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, err := a.PartitionCount(ctx, cfg.Topic)
		if err == nil && n > 0 {
			return n, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			if err == nil {
				err = errors.New("no partitions")
			}
			return 0, fmt.Errorf("loadgen: partitions of %s: %w", cfg.Topic, err)
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}
