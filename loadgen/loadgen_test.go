package loadgen_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/loadgen"
)

// TestRunProducesAtTheRateAndCommitsTheGroup: the generator creates its topic, produces no faster than its
// rate, spreads records over the partitions, and commits the group at what it produced.
func TestRunProducesAtTheRateAndCommitsTheGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("needs Kafka: skipped under -short, the suite without brokers or PostgreSQL")
	}
	topic := kafkatest.TopicName(t, "loadgen")
	const rate, want = 400, 600
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stats loadgen.Stats
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		done <- loadgen.Run(ctx, loadgen.Config{Bootstrap: kafkatest.Bootstrap(t, "A"), Topic: topic, Partitions: 3,
			Rate: rate, Group: "loadgen-" + topic}, &stats)
	}()
	var runErr error
	require.Eventually(t, func() bool {
		select {
		case runErr = <-done:
			return true // Run gave up: reported below
		default:
		}
		return stats.Acked() >= want
	}, 60*time.Second, 20*time.Millisecond, "%d records acknowledged", want)
	require.NoError(t, runErr, "Run stopped before producing %d records", want)
	elapsed := time.Since(start)
	require.GreaterOrEqual(t, elapsed, time.Duration(float64(want)/rate*0.9*float64(time.Second)),
		"%d records took %s: faster than %d/s", want, elapsed, rate)

	ends := kafkatest.PartitionEnds(t, "A", topic, 3)
	for p, end := range ends {
		require.Greater(t, end, int64(0), "partition %d got records", p)
	}
	admin := kafkatest.Admin(t, "A")
	require.Eventually(t, func() bool {
		got, _, err := admin.GroupOffsets(context.Background(), []string{"loadgen-" + topic})
		if err != nil {
			return false
		}
		committed := int64(0)
		for _, o := range got["loadgen-"+topic] {
			committed += o.Offset
		}
		return committed >= want
	}, 30*time.Second, 100*time.Millisecond, "the group is committed at what was produced")
	cancel()
	if runErr == nil {
		require.NoError(t, <-done)
	}
	require.Zero(t, stats.Failed())
}
