package server_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/server"
)

// A worker started with --task-assignment=topics plans each topic onto one task where the even split allows
// (8 topics of 2 partitions over 4 tasks: two whole topics each), and replicates every record once, in order.
func TestTopicAssignmentReplicatesWholeTopicsPerTask(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", func(c *server.Config) { c.TaskAssignment = connectors.AssignTopics })
	prefix := "tas" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 2, 2, 2, 2, 2, 2, 2, 2)
	sent := makeRecords(topics, 8_000, 0)
	kafkatest.Produce(t, "A", sent)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "4"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING RUNNING RUNNING", 60*time.Second)
	requireExactCopy(t, sent, awaitCount(t, prefixA, topics, sent, 3*time.Minute))

	_, tasksBody := k.do(http.MethodGet, "/connectors/"+name+"/tasks", nil)
	taskOf := map[string]int{}
	for i, tk := range tasksBody.([]any) {
		cfg := tk.(map[string]any)["config"].(map[string]any)
		tps, err := mirror.DecodeAssignedPartitions(cfg["task.assigned.partitions"].(string))
		require.NoError(t, err)
		require.Len(t, tps, 4, "16 partitions over 4 tasks")
		for _, tp := range tps {
			if prev, ok := taskOf[tp.Topic]; ok {
				require.Equal(t, prev, i, "both partitions of %s on one task", tp.Topic)
			}
			taskOf[tp.Topic] = i
		}
	}
	require.Len(t, taskOf, 8)
}
