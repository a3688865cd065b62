package kafkabench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// PipeConfig is the bare replication loop: Workers pipelines, each one consumer (assign, no group) feeding one
// producer, with the source partitions dealt round-robin over them, partition p to partition p of the remote
// topic. It is what kmirror's source task does minus everything that makes it a product (offset tracking and
// commits, offset syncs, status, topic discovery), so it is the practical throughput limit of librdkafka on the
// machine.
type PipeConfig struct {
	Consumer map[string]string // librdkafka properties of each consumer (bootstrap.servers of the source)
	Producer map[string]string // librdkafka properties of each producer (bootstrap.servers of the target)
	Target   string            // target bootstrap, to create the remote topics
	Topics   map[string]int    // source topic -> partitions
	Remote   map[string]string // source topic -> remote topic
	Workers  int
	// OnStats, when set, receives every librdkafka statistics event (set statistics.interval.ms in the
	// properties): role is "consumer" or "producer".
	OnStats func(worker int, role, json string)
}

// Pipe creates the remote topics, then replicates until ctx ends; it then flushes what is in flight.
func Pipe(ctx context.Context, cfg PipeConfig) error {
	admin, err := NewAdmin(cfg.Target)
	if err != nil {
		return err
	}
	var topics []Topic
	for t, n := range cfg.Topics {
		topics = append(topics, Topic{Name: cfg.Remote[t], Partitions: n})
	}
	err = admin.CreateTopics(ctx, topics)
	admin.Close()
	if err != nil {
		return err
	}

	var tps []TP
	for t, n := range cfg.Topics {
		for p := range n {
			tps = append(tps, TP{Topic: t, Partition: int32(p)})
		}
	}
	sort.Slice(tps, func(i, j int) bool {
		if tps[i].Topic != tps[j].Topic {
			return tps[i].Topic < tps[j].Topic
		}
		return tps[i].Partition < tps[j].Partition
	})
	n := max(1, min(cfg.Workers, len(tps)))
	assigned := make([][]TP, n)
	for i, tp := range tps {
		assigned[i%n] = append(assigned[i%n], tp)
	}
	remote := make(map[string]*string, len(cfg.Remote))
	for s, r := range cfg.Remote {
		remote[s] = &r
	}

	errs := make([]error, n)
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() { errs[w] = pipeWorker(ctx, cfg, w, assigned[w], remote) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func pipeWorker(ctx context.Context, cfg PipeConfig, w int, parts []TP, remote map[string]*string) error {
	ccm := ckafka.ConfigMap{}
	for k, v := range cfg.Consumer {
		ccm[k] = v
	}
	c, err := ckafka.NewConsumer(&ccm)
	if err != nil {
		return fmt.Errorf("consumer: %w", err)
	}
	defer c.Close()
	// The same Go-side settings as kmirror's producers (connectors/kafka.NewProducer): the pipe is the limit
	// for kmirror's client library, not for its defaults.
	pcm := ckafka.ConfigMap{"go.delivery.report.fields": "none", "go.events.channel.size": 10000, "go.produce.channel.size": 0}
	for k, v := range cfg.Producer {
		pcm[k] = goValue(k, v)
	}
	p, err := ckafka.NewProducer(&pcm)
	if err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	var failed atomic.Pointer[error]
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		for ev := range p.Events() {
			switch e := ev.(type) {
			case *ckafka.Message:
				if e.TopicPartition.Error != nil {
					err := e.TopicPartition.Error
					failed.CompareAndSwap(nil, &err)
				}
			case *ckafka.Stats:
				if cfg.OnStats != nil {
					cfg.OnStats(w, "producer", e.String())
				}
			}
		}
	}()
	defer func() {
		flushCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		for p.Flush(100) > 0 && flushCtx.Err() == nil {
		}
		p.Close()
		<-drained
	}()

	tps := make([]ckafka.TopicPartition, len(parts))
	for i, tp := range parts {
		t := tp.Topic
		tps[i] = ckafka.TopicPartition{Topic: &t, Partition: tp.Partition, Offset: ckafka.OffsetBeginning}
	}
	if err := c.Assign(tps); err != nil {
		return fmt.Errorf("assign: %w", err)
	}
	for ctx.Err() == nil {
		if f := failed.Load(); f != nil {
			return fmt.Errorf("delivery failed: %w", *f)
		}
		switch e := c.Poll(100).(type) {
		case *ckafka.Message:
			if e.TopicPartition.Error != nil {
				continue
			}
			e.TopicPartition = ckafka.TopicPartition{Topic: remote[*e.TopicPartition.Topic], Partition: e.TopicPartition.Partition}
			e.Opaque = nil
			e.LeaderEpoch = nil
			for {
				err := p.Produce(e, nil)
				if err == nil {
					break
				}
				var kerr ckafka.Error
				if !errors.As(err, &kerr) || kerr.Code() != ckafka.ErrQueueFull {
					return fmt.Errorf("produce: %w", err)
				}
				if ctx.Err() != nil {
					return nil
				}
				time.Sleep(time.Millisecond)
			}
		case *ckafka.Stats:
			if cfg.OnStats != nil {
				cfg.OnStats(w, "consumer", e.String())
			}
		}
	}
	return nil
}

// goValue types confluent-kafka-go's own go.* settings, which it wants as int or bool, not string.
func goValue(key, v string) ckafka.ConfigValue {
	if !strings.HasPrefix(key, "go.") {
		return v
	}
	if n, err := strconv.Atoi(v); err == nil {
		return n
	}
	if b, err := strconv.ParseBool(v); err == nil {
		return b
	}
	return v
}
