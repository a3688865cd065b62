package server_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestPartitionsFlagAStragglerAndUnusableSlots, against real replication: one partition of four carries ten
// times the traffic of each other one, and tasks.max 6 leaves two task slots no partition can fill. The
// partitions endpoint measures the rates itself, calls the hot partition a straggler, and counts the slots.
func TestPartitionsFlagAStragglerAndUnusableSlots(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "par" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 4)
	topic := topics[0].name

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "6"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING RUNNING RUNNING", 60*time.Second)

	// A steady load until the verdicts are in: per round 200 records to partition 3, 20 to each of the others.
	bootstrap := kafkatest.Bootstrap(t, "A")
	ctx, stop := context.WithCancel(t.Context())
	loadDone := make(chan error, 1)
	go func() {
		defer close(loadDone)
		seq := 0
		for ctx.Err() == nil {
			var round []kafkatest.Record
			for p := int32(0); p < 4; p++ {
				n := 20
				if p == 3 {
					n = 200
				}
				for range n {
					round = append(round, kafkatest.Record{Topic: topic, Partition: p, Value: fmt.Appendf(nil, "%d", seq), Timestamp: time.Now()})
					seq++
				}
			}
			if err := kafkatest.ProduceTo(bootstrap, round); err != nil {
				loadDone <- err
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	defer func() {
		stop()
		require.NoError(t, <-loadDone)
	}()

	type verdict struct {
		Kind    string   `json:"kind"`
		Message string   `json:"message"`
		Topic   string   `json:"topic"`
		Share   *float64 `json:"share"`
		Unused  *int     `json:"unused"`
	}
	var got struct {
		Partitions int       `json:"partitions"`
		Tasks      int       `json:"tasks"`
		Verdicts   []verdict `json:"verdicts"`
	}
	var straggler, slots *verdict
	require.Eventually(t, func() bool {
		code, _ := k.getJSON("/connectors/"+name+"/partitions", &got)
		if code != http.StatusOK {
			return false
		}
		straggler, slots = nil, nil
		for i, v := range got.Verdicts {
			switch v.Kind {
			case "straggler":
				straggler = &got.Verdicts[i]
			case "unusable_task_slots":
				slots = &got.Verdicts[i]
			}
		}
		return straggler != nil && slots != nil
	}, 90*time.Second, 250*time.Millisecond, "a straggler and unusable slots: %+v", lazy(func() string { return fmt.Sprintf("%+v", got) }))

	require.Equal(t, 4, got.Partitions)
	require.Equal(t, 4, got.Tasks, "one task per partition, not tasks.max")
	require.Equal(t, topic, straggler.Topic)
	require.InDelta(t, 200.0/260, *straggler.Share, 0.1, "partition 3 carries ten times each other partition's records")
	require.Contains(t, straggler.Message, fmt.Sprintf("partition %s-3 carries", topic))
	require.Equal(t, 2, *slots.Unused)
	require.Equal(t, "tasks.max 6, 4 partitions: 4 tasks run, 2 slots cannot be used", slots.Message)
}
