// Package kafkabench is the part of kmirror's benchmark program (bench/) that talks to Kafka directly: it loads
// source topics, runs the bare librdkafka consume-and-produce loop the benchmark compares kmirror with, offers a
// fixed load for latency measurements and reads end offsets. It lives under connectors/kafka because only the
// Kafka wrapper packages may import confluent-kafka-go; nothing in the product imports it.
package kafkabench

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// LibraryVersion is librdkafka's version string.
func LibraryVersion() string {
	_, v := ckafka.LibraryVersion()
	return v
}

// TP is a topic-partition.
type TP struct {
	Topic     string
	Partition int32
}

func (tp TP) String() string { return fmt.Sprintf("%s-%d", tp.Topic, tp.Partition) }

// Admin is an admin client for one cluster.
type Admin struct {
	a *ckafka.AdminClient
}

// NewAdmin connects an admin client to bootstrap.
func NewAdmin(bootstrap string) (*Admin, error) {
	a, err := ckafka.NewAdminClient(&ckafka.ConfigMap{"bootstrap.servers": bootstrap, "log_level": 3})
	if err != nil {
		return nil, fmt.Errorf("admin client for %s: %w", bootstrap, err)
	}
	return &Admin{a: a}, nil
}

// Close releases the client.
func (a *Admin) Close() { a.a.Close() }

// Topics returns every topic with its partition count.
func (a *Admin) Topics() (map[string]int, error) {
	var md *ckafka.Metadata
	var err error
	for range 20 {
		md, err = a.a.GetMetadata(nil, true, 10000)
		if err == nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if err != nil {
		return nil, fmt.Errorf("metadata: %w", err)
	}
	out := make(map[string]int, len(md.Topics))
	for name, t := range md.Topics {
		if t.Error.Code() != ckafka.ErrNoError {
			continue
		}
		out[name] = len(t.Partitions)
	}
	return out, nil
}

// Topic describes a topic to create.
type Topic struct {
	Name       string
	Partitions int
	Config     map[string]string
}

// CreateTopics creates topics (replication factor 1); topics that already exist are not an error.
func (a *Admin) CreateTopics(ctx context.Context, topics []Topic) error {
	const chunk = 200
	for len(topics) > 0 {
		n := min(chunk, len(topics))
		specs := make([]ckafka.TopicSpecification, 0, n)
		for _, t := range topics[:n] {
			specs = append(specs, ckafka.TopicSpecification{Topic: t.Name, NumPartitions: t.Partitions, ReplicationFactor: 1, Config: t.Config})
		}
		topics = topics[n:]
		res, err := a.a.CreateTopics(ctx, specs, ckafka.SetAdminOperationTimeout(60*time.Second))
		if err != nil {
			return fmt.Errorf("create topics: %w", err)
		}
		var errs []error
		for _, r := range res {
			if c := r.Error.Code(); c != ckafka.ErrNoError && c != ckafka.ErrTopicAlreadyExists {
				errs = append(errs, fmt.Errorf("create topic %s: %w", r.Topic, r.Error))
			}
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
	}
	return nil
}

// DeleteTopics deletes topics; missing ones are not an error.
func (a *Admin) DeleteTopics(ctx context.Context, names []string) error {
	if len(names) == 0 {
		return nil
	}
	res, err := a.a.DeleteTopics(ctx, names, ckafka.SetAdminOperationTimeout(60*time.Second))
	if err != nil {
		return fmt.Errorf("delete topics: %w", err)
	}
	var errs []error
	for _, r := range res {
		if c := r.Error.Code(); c != ckafka.ErrNoError && c != ckafka.ErrUnknownTopicOrPart && c != ckafka.ErrUnknownTopic {
			errs = append(errs, fmt.Errorf("delete topic %s: %w", r.Topic, r.Error))
		}
	}
	return errors.Join(errs...)
}

// DeleteTopicsMatching deletes every topic for which match returns true and returns their names.
func (a *Admin) DeleteTopicsMatching(ctx context.Context, match func(string) bool) ([]string, error) {
	topics, err := a.Topics()
	if err != nil {
		return nil, err
	}
	var names []string
	for t := range topics {
		if match(t) {
			names = append(names, t)
		}
	}
	sort.Strings(names)
	return names, a.DeleteTopics(ctx, names)
}

// PartitionEnds returns the end offsets of tps without first reading the cluster's metadata (EndOffsets does):
// for watching thousands of partitions that are known to exist. Partitions that fail are left out.
func (a *Admin) PartitionEnds(ctx context.Context, tps []TP) (map[TP]int64, error) {
	req := make(map[ckafka.TopicPartition]ckafka.OffsetSpec, len(tps))
	for _, tp := range tps {
		topic := tp.Topic
		req[ckafka.TopicPartition{Topic: &topic, Partition: tp.Partition}] = ckafka.LatestOffsetSpec
	}
	return a.ends(ctx, req, ckafka.IsolationLevelReadUncommitted)
}

// EndOffsets returns the end offset of every partition of topics (topic -> partition count). Partitions of
// topics that do not exist (yet) are missing from the result.
func (a *Admin) EndOffsets(ctx context.Context, topics map[string]int) (map[TP]int64, error) {
	existing, err := a.Topics()
	if err != nil {
		return nil, err
	}
	req := map[ckafka.TopicPartition]ckafka.OffsetSpec{}
	for t, n := range topics {
		have, ok := existing[t]
		if !ok {
			continue
		}
		for p := range min(n, have) {
			topic := t
			req[ckafka.TopicPartition{Topic: &topic, Partition: int32(p)}] = ckafka.LatestOffsetSpec
		}
	}
	// read_committed: the last stable offset, which is the end of a partition without open transactions and,
	// for a system replicating in transactions, only what downstream read_committed consumers can see.
	return a.ends(ctx, req, ckafka.IsolationLevelReadCommitted)
}

// ends lists the offsets req asks for at isolation. A partition that fails is left out: one created a moment
// ago may have no leader yet (LEADER_NOT_AVAILABLE, UNKNOWN_LEADER_EPOCH, ...), so it counts as empty and is
// asked again next time.
func (a *Admin) ends(ctx context.Context, req map[ckafka.TopicPartition]ckafka.OffsetSpec, isolation ckafka.IsolationLevel) (map[TP]int64, error) {
	out := make(map[TP]int64, len(req))
	if len(req) == 0 {
		return out, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	res, err := a.a.ListOffsets(ctx, req, ckafka.SetAdminIsolationLevel(isolation))
	if err != nil {
		return nil, fmt.Errorf("list offsets: %w", err)
	}
	for tp, info := range res.ResultInfos {
		if info.Error.Code() == ckafka.ErrNoError {
			out[TP{Topic: *tp.Topic, Partition: tp.Partition}] = int64(info.Offset)
		}
	}
	return out, nil
}
