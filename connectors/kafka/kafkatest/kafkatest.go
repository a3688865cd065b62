// Package kafkatest gives tests the harness's two real Kafka clusters, "A" and "B" (KAFKA_A_BOOTSTRAP and
// KAFKA_B_BOOTSTRAP, set by scripts/harness), with helpers to create uniquely named topics and to produce and
// read back records.
package kafkatest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/harnessenv"
)

// Bootstrap returns the bootstrap address of cluster "A" or "B", or fails the test with instructions; under -short
// it skips the test instead, as every test that needs the harness does.
func Bootstrap(t testing.TB, cluster string) string {
	t.Helper()
	return harnessenv.Require(t, "Kafka", "KAFKA_"+strings.ToUpper(cluster)+"_BOOTSTRAP")
}

// Admin returns an admin client for the cluster, closed when the test ends.
func Admin(t testing.TB, cluster string) *kafka.Admin {
	t.Helper()
	a, err := kafka.NewAdmin(map[string]string{"bootstrap.servers": Bootstrap(t, cluster)}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("create admin for cluster %s: %v", cluster, err)
	}
	a.Timeout = 30 * time.Second
	t.Cleanup(a.Close)
	return a
}

var unsafeChars = regexp.MustCompile(`[^a-zA-Z0-9._-]+`)

// TopicName returns a topic name unique to this test run, readable as belonging to the test.
func TopicName(t testing.TB, prefix string) string {
	name := unsafeChars.ReplaceAllString(t.Name(), "-")
	if len(name) > 60 {
		name = name[:60]
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return fmt.Sprintf("%s-%s-%s", prefix, strings.ToLower(name), hex.EncodeToString(b))
}

// CreateTopic creates a topic on the cluster and waits until its metadata shows every partition.
func CreateTopic(t testing.TB, cluster, name string, partitions int, config map[string]string) {
	t.Helper()
	ctx := context.Background()
	a := Admin(t, cluster)
	res, err := a.CreateTopics(ctx, []kafka.NewTopic{{Name: name, Partitions: partitions, ReplicationFactor: 1, Config: config}})
	if err != nil {
		t.Fatalf("create topic %s on %s: %v", name, cluster, err)
	}
	if err := res[name]; err != nil {
		t.Fatalf("create topic %s on %s: %v", name, cluster, err)
	}
	AwaitPartitions(t, cluster, name, partitions)
}

// AwaitPartitions waits until the topic exists on the cluster with at least n partitions.
func AwaitPartitions(t testing.TB, cluster, name string, n int) {
	t.Helper()
	a := Admin(t, cluster)
	deadline := time.Now().Add(60 * time.Second)
	for {
		got, err := a.PartitionCount(context.Background(), name)
		if err == nil && got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s on %s: want %d partitions, have %d (%v)", name, cluster, n, got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Record is a record to produce or one read back.
type Record struct {
	Topic     string
	Partition int32
	Offset    int64
	Key       []byte
	Value     []byte
	Headers   []kafka.Header
	Timestamp time.Time
}

// Produce writes records to the cluster with an idempotent producer and waits until every one is acknowledged.
func Produce(t testing.TB, cluster string, records []Record) {
	t.Helper()
	if err := ProduceTo(Bootstrap(t, cluster), records); err != nil {
		t.Fatalf("produce to %s: %v", cluster, err)
	}
}

// ProduceTo is Produce for goroutines that cannot fail a test themselves. extra overrides producer properties
// (librdkafka names).
func ProduceTo(bootstrap string, records []Record, extra ...map[string]string) error {
	var mu sync.Mutex
	var failed []error
	acked := make(chan struct{}, len(records))
	props := map[string]string{
		"bootstrap.servers": bootstrap, "enable.idempotence": "true", "linger.ms": "5",
		"queue.buffering.max.messages": "0", "queue.buffering.max.kbytes": "1048576",
	}
	for _, e := range extra {
		for k, v := range e {
			props[k] = v
		}
	}
	p, err := kafka.NewProducer(props, slog.New(slog.DiscardHandler), func(d kafka.Delivery) {
		if d.Err != nil {
			mu.Lock()
			failed = append(failed, d.Err)
			mu.Unlock()
		}
		acked <- struct{}{}
	})
	if err != nil {
		return err
	}
	defer p.Close()
	for _, r := range records {
		for {
			err := p.Produce(r.Topic, r.Partition, r.Key, r.Value, r.Headers, r.Timestamp, nil)
			if err == kafka.ErrQueueFull {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				return err
			}
			break
		}
	}
	timeout := time.After(2 * time.Minute)
	for range records {
		select {
		case <-acked:
		case <-timeout:
			return fmt.Errorf("not every record was acknowledged within 2 minutes")
		}
	}
	if len(failed) > 0 {
		return fmt.Errorf("%d records failed, first: %w", len(failed), failed[0])
	}
	return nil
}

// EndOffsets returns the sum of the end offsets of the topic's first partitions partitions (0 for a missing
// topic): a cheap way to watch records arrive.
func EndOffsets(t testing.TB, cluster, topic string, partitions int) int64 {
	t.Helper()
	var sum int64
	for _, end := range PartitionEnds(t, cluster, topic, partitions) {
		sum += end
	}
	return sum
}

// PartitionEnds returns the end offset of each of the topic's first partitions partitions; a partition that
// does not exist yet, or whose leader just moved, counts as 0.
func PartitionEnds(t testing.TB, cluster, topic string, partitions int) []int64 {
	t.Helper()
	c := reader(t, cluster)
	defer c.Close()
	ends := make([]int64, partitions)
	for p := range partitions {
		_, high, err := c.Watermarks(topic, int32(p), 10*time.Second)
		if err != nil {
			if kafka.IsUnknownTopic(err) || kafka.IsRetriable(err) {
				continue
			}
			t.Fatalf("watermarks of %s [%d]: %v", topic, p, err)
		}
		ends[p] = high
	}
	return ends
}

// Consume reads every partition of topic from the beginning until want records have arrived (or timeout),
// and returns them in the order each partition delivered them.
func Consume(t testing.TB, cluster, topic string, partitions, want int, timeout time.Duration) []Record {
	t.Helper()
	c := reader(t, cluster)
	defer c.Close()
	starts := make([]kafka.Start, partitions)
	for p := range partitions {
		starts[p] = kafka.Start{Topic: topic, Partition: int32(p), Offset: kafka.OffsetBeginning}
	}
	if err := c.Assign(starts); err != nil {
		t.Fatalf("assign: %v", err)
	}
	var out []Record
	deadline := time.Now().Add(timeout)
	for len(out) < want && time.Now().Before(deadline) {
		if r, ok := next(t, c, topic); ok {
			out = append(out, r)
		}
	}
	return out
}

// ReadAll reads one partition from its beginning up to the end offset it has when ReadAll starts.
func ReadAll(t testing.TB, cluster, topic string, partition int32) []Record {
	t.Helper()
	return ReadPartitions(t, cluster, map[string]int{topic: int(partition) + 1}, partition)[Partition{topic, partition}]
}

// Partition names a topic-partition in ReadPartitions' result.
type Partition struct {
	Topic     string
	Partition int32
}

// ReadPartitions reads partitions [from, n) of each topic (topic -> n) with one consumer, each from its log
// start up to the end offset it has when ReadPartitions starts. A topic that does not exist yet reads as empty.
func ReadPartitions(t testing.TB, cluster string, topics map[string]int, from int32) map[Partition][]Record {
	t.Helper()
	c := reader(t, cluster)
	defer c.Close()
	ends := map[Partition]int64{}
	var starts []kafka.Start
	for topic, n := range topics {
		for p := from; p < int32(n); p++ {
			low, high, err := watermarks(c, topic, p)
			if kafka.IsUnknownTopic(err) {
				continue // not created yet: nothing to read
			}
			if err != nil {
				t.Fatalf("read watermarks of %s [%d]: %v", topic, p, err)
			}
			if high > low {
				ends[Partition{topic, p}] = high
				starts = append(starts, kafka.Start{Topic: topic, Partition: p, Offset: low})
			}
		}
	}
	out := map[Partition][]Record{}
	if len(starts) == 0 {
		return out
	}
	if err := c.Assign(starts); err != nil {
		t.Fatalf("assign: %v", err)
	}
	done := 0
	deadline := time.Now().Add(2 * time.Minute)
	for done < len(ends) && time.Now().Before(deadline) {
		r, ok := next(t, c, "")
		if !ok {
			continue
		}
		key := Partition{r.Topic, r.Partition}
		end := ends[key]
		if r.Offset >= end {
			continue // arrived after the end offsets were taken
		}
		out[key] = append(out[key], r)
		if r.Offset == end-1 {
			done++
		}
	}
	if done < len(ends) {
		t.Fatalf("read %d partitions of %v on %s: only %d reached their end offset within 2 minutes", len(ends), topics, cluster, done)
	}
	return out
}

// watermarks reads a partition's offsets, waiting out a retriable error such as a new topic's leader not
// elected yet (NOT_LEADER_OR_FOLLOWER) for up to 30 s.
func watermarks(c *kafka.Consumer, topic string, partition int32) (low, high int64, err error) {
	deadline := time.Now().Add(30 * time.Second)
	for {
		low, high, err = c.Watermarks(topic, partition, 30*time.Second)
		if err == nil || !kafka.IsRetriable(err) || time.Now().After(deadline) {
			return low, high, err
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// reader returns an assign-only consumer of the cluster that reads uncommitted data, as MM2 does.
func reader(t testing.TB, cluster string) *kafka.Consumer {
	t.Helper()
	c, err := kafka.NewConsumer(map[string]string{
		"bootstrap.servers": Bootstrap(t, cluster), "group.id": "kafkatest-reader", "enable.auto.commit": "false",
		"enable.auto.offset.store": "false", "isolation.level": "read_uncommitted",
	}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("create consumer: %v", err)
	}
	return c
}

// next polls once and returns the record, if one arrived; transient errors count as nothing arriving.
func next(t testing.TB, c *kafka.Consumer, topic string) (Record, bool) {
	t.Helper()
	r, ok, err := c.Poll(100 * time.Millisecond)
	if err != nil {
		if kafka.IsRetriable(err) {
			return Record{}, false
		}
		t.Fatalf("consume %s: %v", topic, err)
	}
	if !ok {
		return Record{}, false
	}
	return Record{Topic: r.Topic(), Partition: r.Partition(), Offset: r.Offset(), Key: r.Key(), Value: r.Value(),
		Headers: r.Headers(), Timestamp: r.Timestamp()}, true
}
