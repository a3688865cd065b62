package source

// The run's surroundings for the engines' property test: a lease, a TaskEnv and a task over the double.

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafkafake"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// doubleLease is a lease whose validity changes only where the run asks for it (Valid), as the schedule says:
// a record handed over while it is not valid is a violation, with no race to excuse it.
type doubleLease struct {
	mu      sync.Mutex
	valid   bool
	checks  int
	lapseAt int  // the check at which the lease lapses (0: never)
	revoke  bool // a lapse revokes the lease; otherwise it is valid again after a moment
	revoked chan struct{}
	closed  bool
}

func (l *doubleLease) Valid() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.checks++
	if l.checks == l.lapseAt && l.valid {
		l.valid = false
		if l.revoke {
			close(l.revoked)
			l.closed = true
		} else {
			time.AfterFunc(60*time.Millisecond, func() {
				l.mu.Lock()
				defer l.mu.Unlock()
				l.valid = true
			})
		}
	}
	return l.valid
}

// hold ends the lease's schedule once the faults are over: it lapses no more. It tells whether a lapse had
// revoked it already, which ends the run for good.
func (l *doubleLease) hold() (revoked bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lapseAt = 0
	return l.closed
}

func (l *doubleLease) isValid() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.valid
}

func (l *doubleLease) ValidFor() time.Duration {
	if l.isValid() {
		return time.Hour
	}
	return 0
}
func (l *doubleLease) Revoked() <-chan struct{} { return l.revoked }
func (l *doubleLease) Settle() time.Duration    { return 3 * time.Second }

// doubleEnv is the run's TaskEnv: it stores commits (checking each against the target) and serves them to
// the next pipeline.
type doubleEnv struct {
	tasks.TaskEnv
	lease *doubleLease
	stop  context.Context
	check func(offsets []kmtype.Offset) // called with each commit, before it is stored

	mu      sync.Mutex
	stored  map[int32]kmtype.Offset
	commits []kmtype.Offset
	notices []kmtype.Notice // the last notices reported
}

func (e *doubleEnv) Running(context.Context) error { return nil }
func (e *doubleEnv) ReadOffsets(context.Context) ([]kmtype.Offset, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []kmtype.Offset
	for _, o := range e.stored {
		out = append(out, o)
	}
	return out, nil
}

func (e *doubleEnv) CommitProgress(_ context.Context, offsets []kmtype.Offset, _ []kmtype.OffsetRange) error {
	e.check(offsets)
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, o := range offsets {
		part, _ := jsonInt(o.Partition["partition"])
		e.stored[int32(part)] = o
		e.commits = append(e.commits, o)
	}
	return nil
}

func (e *doubleEnv) LastOffsetRanges(context.Context, []kmtype.RangeKey) (map[kmtype.RangeKey]kmtype.OffsetRange, error) {
	return nil, nil
}
func (e *doubleEnv) OppositeRanges(context.Context, []kmtype.RangeQuery) ([]kmtype.TargetRange, error) {
	return nil, nil
}
func (e *doubleEnv) PruneOffsetRanges(context.Context, kmtype.RangeKey, int64, int) error { return nil }
func (e *doubleEnv) PartitionStats(context.Context) ([]kmtype.PartitionStat, error)       { return nil, nil }
func (e *doubleEnv) PublishPartitionStats(context.Context, []kmtype.PartitionStat) error  { return nil }
func (e *doubleEnv) PublishPipelineStat(context.Context, kmtype.PipelineStat) error       { return nil }
func (e *doubleEnv) RecordTopics(context.Context, []string) error                         { return nil }
func (e *doubleEnv) Report(_ context.Context, ns []kmtype.Notice) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.notices = append([]kmtype.Notice(nil), ns...)
	return nil
}
func (e *doubleEnv) FenceTaskSet(context.Context, tasks.FenceFunc) error { return nil }
func (e *doubleEnv) Lease() tasks.Lease                                  { return e.lease }
func (e *doubleEnv) StopContext() context.Context                        { return e.stop }
func (e *doubleEnv) Logger() *slog.Logger                                { return slog.New(slog.DiscardHandler) }

// doubleTask is a source task of connector mm2 replicating topic t (partitions 0 and 1) of cluster A to B.
func doubleTask(t *rapid.T, dataPath DataPath, eos bool) *sourceTask {
	raw := map[string]string{
		"name": "mm2", "connector.class": mirrorconfig.SourceConnectorClass, "source.cluster.alias": "A", "target.cluster.alias": "B",
		"source.cluster.bootstrap.servers": "a:9092", "target.cluster.bootstrap.servers": "b:9092", connectors.TaskClassKey: connectors.SourceTaskClass,
		mirrorconfig.EmitOffsetSyncsEnabledConfig: "false",
		mirror.TaskAssignedPartitionsConfig:       mirror.EncodeAssignedPartitions([]mirror.TopicPartition{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 1}}),
		mirror.TaskIndexConfig:                    "0",
	}
	p, _ := mirrorconfig.LookupPlugin(mirrorconfig.SourceConnectorClass)
	cfg, err := connectors.ParseConfig(p, raw, clientconfig.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &sourceTask{id: tasks.TaskID{Connector: "mm2"}, cfg: newConfig(cfg), log: slog.New(slog.DiscardHandler), dataPath: dataPath, eos: eos}
}

// committedReader reads a topic of the target as a read_committed consumer does (kafka.ReadTopicPartitions).
func committedReader(target *kafkafake.Target) func(context.Context, map[string]string, string, []int32, *slog.Logger, func(kafka.Record) error) (kafka.TopicRead, error) {
	return func(_ context.Context, _ map[string]string, topic string, parts []int32, _ *slog.Logger, fn func(kafka.Record) error) (kafka.TopicRead, error) {
		for _, part := range parts {
			es, err := target.Entries(topic, part)
			if err != nil {
				return kafka.TopicRead{}, fakeErr(err)
			}
			for _, e := range es {
				if e.Marker || !e.Committed {
					continue
				}
				if err := fn(kafka.NewRecord(topic, part, e.Offset, e.Message.Key, e.Message.Value, nil, e.Message.Timestamp)); err != nil {
					return kafka.TopicRead{}, err
				}
			}
		}
		return kafka.TopicRead{}, nil
	}
}
