package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestLagSecondsIsThereWheneverThereIsLag: under steady production (about 200 records/s, default flags) the
// source's end is often past the last acknowledged record while no record of the partition is in flight, so
// that the oldest unreplicated record's timestamp is not known; every scrape of /metrics that shows a
// partition's lag in records above 0 shows its lag in seconds too, and so does every published partition stat.
func TestLagSecondsIsThereWheneverThereIsLag(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	st := openStore(t, k)
	prefix := "lagsec" + uniqueAlias("")
	topic := kafkatest.TopicName(t, prefix)
	kafkatest.CreateTopic(t, "A", topic, 3, nil)

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Bootstrap(t, "A")), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.ProducerLinger(0))
	require.NoError(t, err)
	defer cl.Close()
	wg.Add(1)
	go func() { // about 200 records/s over the three partitions
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: int32(i % 3), Value: []byte(strconv.Itoa(i))}, nil)
			}
		}
	}()

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, topic, nil))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	native := map[string]string{"connector": name, "source": "A", "target": "B", "topic": topic}
	require.Eventually(t, func() bool {
		return len(find(k.samples()["kmirror_replicated_records_total"], "partition", native)) == 3
	}, 60*time.Second, 200*time.Millisecond, "replication started on every partition")

	lagging, published := 0, 0
	var missing []string
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(250 * time.Millisecond) {
		m := k.samples()
		lags := find(m["kmirror_replication_lag_records"], "partition", native)
		secs := find(m["kmirror_replication_lag_seconds"], "partition", native)
		for p, lag := range lags {
			if lag <= 0 {
				continue
			}
			lagging++
			if _, ok := secs[p]; !ok {
				missing = append(missing, fmt.Sprintf("partition %s at lag %.0f", p, lag))
			}
		}
		for p, s := range partitionStats(t, st, name, topic) {
			if s.LagRecords != nil && *s.LagRecords > 0 {
				published++
				if s.LagSeconds == nil {
					missing = append(missing, fmt.Sprintf("published stat of partition %d at lag %d", p, *s.LagRecords))
				}
			}
		}
	}
	t.Logf("%d scrapes × partitions with lag in records, %d published stats with lag", lagging, published)
	require.Greater(t, lagging, 30, "the consumer's fetch wait keeps records waiting")
	require.Empty(t, missing, "lag in seconds absent while there was lag (of %d lagging observations)", lagging)
}
