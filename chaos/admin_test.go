package chaos

import (
	"log/slog"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// newAdmin returns an admin client of cluster A or B, closed when the test ends. While a broker is killed on
// purpose every client would log its reconnection attempts: this one is silenced.
func newAdmin(t *testing.T, cluster string) *kafka.Admin {
	t.Helper()
	a, err := kafka.NewAdmin(map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, cluster), "log_level": "0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatalf("admin client of %s: %v", cluster, err)
	}
	a.Timeout = 30 * time.Second
	t.Cleanup(a.Close)
	return a
}

// createTopic creates a topic and waits until its metadata shows every partition.
func createTopic(t *testing.T, cluster, name string, partitions int) {
	t.Helper()
	res, err := newAdmin(t, cluster).CreateTopics(t.Context(), []kafka.NewTopic{{Name: name, Partitions: partitions, ReplicationFactor: 1}})
	if err == nil {
		err = res[name]
	}
	if err != nil {
		t.Fatalf("create topic %s on %s: %v", name, cluster, err)
	}
	awaitPartitions(t, cluster, name, partitions)
}

// awaitPartitions waits until the topic exists on the cluster with at least n partitions.
func awaitPartitions(t *testing.T, cluster, name string, n int) {
	t.Helper()
	a := newAdmin(t, cluster)
	deadline := time.Now().Add(time.Minute)
	for {
		got, err := a.PartitionCount(t.Context(), name)
		if err == nil && got >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("topic %s on %s: want %d partitions, have %d (%v)", name, cluster, n, got, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
