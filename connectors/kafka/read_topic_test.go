package kafka_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestReadTopicEndsUnderTransactionalTraffic reads with read_committed a partition that other producers keep
// writing to in transactions, as the tasks of an exactly-once connector write the offsets topic while one of
// them resumes. The offset just below the end the read starts with is a commit marker, which holds no record;
// and under steady traffic the consumer never fetches at the last stable offset, so librdkafka never reports
// the partition's EOF. The read must end anyway, on the first record at or past the end: everything below it
// has been read then. (It used to wait for an EOF until its deadline: a task of the chaos suite could not
// resume for minutes.)
func TestReadTopicEndsUnderTransactionalTraffic(t *testing.T) {
	t.Parallel()
	topic := kafkatest.TopicName(t, "readtxn")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	bootstrap := kafkatest.Bootstrap(t, "A")

	newTxnProducer := func(id string) *kafka.Producer {
		p, err := kafka.NewProducer(map[string]string{"bootstrap.servers": bootstrap, "transactional.id": id, "linger.ms": "0"},
			slog.New(slog.DiscardHandler), func(kafka.Delivery) {})
		require.NoError(t, err)
		t.Cleanup(p.Close)
		ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
		defer cancel()
		require.NoError(t, p.InitTransactions(ctx))
		return p
	}
	commit := func(p *kafka.Producer, value string) error {
		if err := p.BeginTransaction(); err != nil {
			return err
		}
		if err := p.Produce(topic, 0, nil, []byte(value), nil, time.Now(), nil); err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return p.CommitTransaction(ctx)
	}

	// Before the read: one committed transaction, a record and its commit marker.
	require.NoError(t, commit(newTxnProducer(topic+"-first"), "before"))

	// During the read: a transaction committed every few milliseconds.
	busy := newTxnProducer(topic + "-busy")
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var busyErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			if err := commit(busy, fmt.Sprintf("during-%d", i)); err != nil {
				busyErr = err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		wg.Wait()
		require.NoError(t, busyErr)
	}()
	// The read starts once the busy producer's transactions are on the log.
	deadline := time.Now().Add(30 * time.Second)
	for kafkatest.EndOffsets(t, "A", topic, 1) < 10 {
		require.True(t, time.Now().Before(deadline), "the busy producer writes nothing")
		time.Sleep(10 * time.Millisecond)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	start := time.Now()
	var values []string
	read, err := kafka.ReadTopic(ctx, map[string]string{"bootstrap.servers": bootstrap, "isolation.level": "read_committed"}, topic,
		slog.New(slog.DiscardHandler), func(r kafka.Record) error { values = append(values, string(r.Value())); return nil })
	require.NoError(t, err, "ReadTopic under transactional traffic")
	t.Logf("read %d records in %.2f s", read.Records, time.Since(start).Seconds())
	require.NotEmpty(t, values)
	require.Equal(t, "before", values[0])
	require.Less(t, time.Since(start), 10*time.Second, "the read ends when it passes its end, not at its deadline")
}
