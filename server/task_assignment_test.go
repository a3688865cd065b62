package server_test

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/source"
	"github.com/kmirror/kmirror/server"
)

// taskPartitions reads the connector's task set: each task's partitions, by task id.
func (k *kmirror) taskPartitions(name string) [][]mirror.TopicPartition {
	k.t.Helper()
	_, body := k.do(http.MethodGet, "/connectors/"+name+"/tasks", nil)
	list, _ := body.([]any)
	out := make([][]mirror.TopicPartition, len(list))
	for i, tk := range list {
		cfg := tk.(map[string]any)["config"].(map[string]any)
		tps, err := mirror.DecodeAssignedPartitions(cfg[mirror.TaskAssignedPartitionsConfig].(string))
		require.NoError(k.t, err)
		out[i] = tps
	}
	return out
}

// By default a worker plans each topic onto one task where the even split allows (8 topics of 2 partitions
// over 4 tasks: two whole topics each), and replicates every record once, in order.
func TestTopicAssignmentReplicatesWholeTopicsPerTask(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "tas" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 2, 2, 2, 2, 2, 2, 2, 2)
	sent := makeRecords(topics, 8_000, 0)
	kafkatest.Produce(t, "A", sent)

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "4"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING RUNNING RUNNING", 60*time.Second)
	requireExactCopy(t, sent, awaitCount(t, prefixA, topics, sent, 3*time.Minute))

	taskOf := map[string]int{}
	for i, tps := range k.taskPartitions(name) {
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

// A worker started with --task-assignment=partitions deals MM2's spread: every topic over as many tasks as it
// has partitions.
func TestPartitionsAssignmentSpreadsTopics(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", func(c *server.Config) { c.TaskAssignment = source.AssignPartitions })
	prefix := "tap" + uniqueAlias("")
	createSourceTopics(t, prefix, 4, 4)
	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "4"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING RUNNING RUNNING", 60*time.Second)
	for i, tps := range k.taskPartitions(name) {
		topicsOn := map[string]bool{}
		for _, tp := range tps {
			topicsOn[tp.Topic] = true
		}
		require.Len(t, topicsOn, 2, "task %d holds a partition of each topic", i)
	}
}

// hotRecords are n records of the scenario from seq on: nine in ten to the hot topic's partitions (1 KiB values),
// the rest dealt over the cold topics; each carries its sequence number so that the copy can be audited.
func hotRecords(hot string, cold []string, from, n int) []kafkatest.Record {
	out := make([]kafkatest.Record, 0, n)
	value := strings.Repeat("h", 1024)
	for i := from; i < from+n; i++ {
		r := kafkatest.Record{Topic: hot, Partition: int32(i % 4), Key: []byte("k" + strconv.Itoa(i)), Value: []byte(value),
			Timestamp: recordsBase.Add(time.Duration(i) * time.Millisecond), Headers: []kafka.Header{{Key: "seq", Value: []byte(strconv.Itoa(i))}}}
		if i%10 == 0 {
			r.Topic, r.Partition, r.Value = cold[(i/10)%len(cold)], int32((i/40)%4), []byte("c"+strconv.Itoa(i))
		}
		out = append(out, r)
	}
	return out
}

// The default assignment puts a hot topic inside one task; the planner then spreads its partitions over the
// tasks by measured load while records keep arriving, each move a hand-over, and the copy is exact: every
// record once, in order, in its partition (0 missing, 0 duplicated, 0 reordered), and the moves are visible
// in the partitions endpoint, the metrics and the task configs.
func TestHotTopicIsSpreadByLoadWithoutDuplicates(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "")
	prefix := "hot" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 4, 4, 4, 4)
	hot, cold := topics[0].name, []string{topics[1].name, topics[2].name, topics[3].name}

	name := "mm2-" + prefix
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{
		"tasks.max": "4", mirrorconfig.TaskMovesSustainConfig: "2000"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING RUNNING RUNNING RUNNING", 60*time.Second)
	hotTasks := func() int {
		on := map[int]bool{}
		for task, tps := range k.taskPartitions(name) {
			for _, tp := range tps {
				if tp.Topic == hot {
					on[task] = true
				}
			}
		}
		return len(on)
	}
	require.Equal(t, 1, hotTasks(), "grouped: the hot topic starts inside one task")

	// About 0.9 MiB/s to the hot topic and 10 KiB/s to the cold ones, in one-second batches, until the hot
	// partitions sit on four tasks.
	loadAndAudit(t, topics, func() bool { return hotTasks() == 4 }, "the hot topic on four tasks",
		func(from int) []kafkatest.Record { return hotRecords(hot, cold, from, 1000) })

	var report struct {
		Moves []mirror.PartitionMove `json:"moves"`
	}
	code, err := k.getJSON("/connectors/"+name+"/partitions", &report)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, code)
	require.NotEmpty(t, report.Moves)
	for _, m := range report.Moves {
		require.Contains(t, m.Reason, "the mean load", "%+v", m)
		for _, out := range m.Out {
			require.True(t, strings.HasPrefix(out, hot+"-"), "only hot partitions are moved out: %+v", m)
		}
	}
	spread, ok := sample(k.scrape(), "kmirror_connector_partition_moves_total", map[string]string{"connector": name, "reason": "spread"})
	require.True(t, ok)
	require.GreaterOrEqual(t, spread, 3.0, "three hot partitions left the task that held all four")
}

// loadAndAudit produces next's batch every second until done says so (within 4 minutes), then five more so
// that the last hand-over happens under load too, and checks with a per-record audit that B holds an exact
// copy: every record once, in order, in its partition.
func loadAndAudit(t *testing.T, topics []sourceTopic, done func() bool, what string, next func(from int) []kafkatest.Record) {
	t.Helper()
	var sent []kafkatest.Record
	deadline := time.Now().Add(4 * time.Minute)
	for extra := 0; extra < 5; {
		if done() {
			extra++
		} else {
			require.False(t, time.Now().After(deadline), "not within 4 minutes: %s", what)
		}
		began := time.Now()
		batch := next(len(sent))
		kafkatest.Produce(t, "A", batch)
		sent = append(sent, batch...)
		if extra == 0 {
			time.Sleep(time.Until(began.Add(time.Second))) // the load's pace, not a wait for a condition
		}
	}
	got := awaitCount(t, prefixA, topics, sent, 3*time.Minute)
	missing, duplicated, reordered := auditCopy(sent, got)
	t.Logf("%s; audit of %d records: missing %d, duplicated %d, reordered %d", what, len(sent), missing, duplicated, reordered)
	require.Zero(t, missing+duplicated+reordered)
	requireExactCopy(t, sent, got)
}

// auditCopy compares what the remote partitions hold with what was sent, by each record's sequence number:
// records never copied, records copied more than once, and records copied out of their partition's order.
func auditCopy(sent []kafkatest.Record, got map[partitionKey][]kafkatest.Record) (missing, duplicated, reordered int) {
	seq := func(r kafkatest.Record) string {
		for _, h := range r.Headers {
			if h.Key == "seq" {
				return string(h.Value)
			}
		}
		return fmt.Sprint(r.Key)
	}
	for k, want := range groupByPartition(sent) {
		copies := map[string]int{}
		last := -1
		pos := map[string]int{}
		for i, r := range want {
			pos[seq(r)] = i
		}
		for _, r := range got[k] {
			s := seq(r)
			copies[s]++
			if copies[s] > 1 {
				duplicated++
				continue
			}
			if p, ok := pos[s]; ok {
				if p < last {
					reordered++
				}
				last = max(last, p)
			}
		}
		for _, r := range want {
			if copies[seq(r)] == 0 {
				missing++
			}
		}
	}
	return missing, duplicated, reordered
}

// taskWorkers reads, from the connector's status, the worker running each task.
func (k *kmirror) taskWorkers(name string) map[int]string {
	k.t.Helper()
	out := map[int]string{}
	code, body := k.do(http.MethodGet, "/connectors/"+name+"/status", nil)
	if code != http.StatusOK {
		return out
	}
	for _, tk := range body.(map[string]any)["tasks"].([]any) {
		m := tk.(map[string]any)
		id, err := strconv.Atoi(fmt.Sprint(m["id"]))
		require.NoError(k.t, err)
		if m["state"] == "RUNNING" {
			out[id] = fmt.Sprint(m["worker_id"])
		}
	}
	return out
}

// Two workers run a connector's four tasks, two each by count. When both tasks on one worker carry the load,
// the leader exchanges one of them for a cold task of the same connector on the other worker after the
// sustained minute: a hand-over of both tasks while records arrive, and the copy is exact.
func TestHotTasksAreSpreadOverWorkersByLoad(t *testing.T) {
	t.Parallel()
	k1 := startKmirror(t, "")
	k2 := startKmirror(t, k1.dbURL)
	prefix := "wld" + uniqueAlias("")
	topics := createSourceTopics(t, prefix, 1, 1, 1, 1)
	name := "mm2-" + prefix
	code, body := k1.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, prefix+".*", map[string]any{"tasks.max": "4"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)

	// Two tasks on each worker.
	var onWorker map[string][]int
	require.Eventually(t, func() bool {
		onWorker = map[string][]int{}
		for task, w := range k2.taskWorkers(name) {
			onWorker[w] = append(onWorker[w], task)
		}
		return len(onWorker) == 2 && len(onWorker[slices.Collect(maps.Keys(onWorker))[0]]) == 2
	}, 90*time.Second, 200*time.Millisecond, "four tasks, two on each worker: %v", onWorker)
	var hotWorker string
	for w := range onWorker {
		hotWorker = w
		break
	}
	tasksOf := k1.taskPartitions(name)
	var hot, cold []string
	for task, tps := range tasksOf {
		require.Len(t, tps, 1)
		if slices.Contains(onWorker[hotWorker], task) {
			hot = append(hot, tps[0].Topic)
		} else {
			cold = append(cold, tps[0].Topic)
		}
	}
	t.Logf("hot topics %v on %s", hot, hotWorker)
	apart := func() bool {
		workers := k1.taskWorkers(name)
		seen := map[string]bool{}
		for task, tps := range k1.taskPartitions(name) {
			if slices.Contains(hot, tps[0].Topic) {
				if workers[task] == "" {
					return false
				}
				seen[workers[task]] = true
			}
		}
		return len(seen) == 2
	}

	// About 0.5 MiB/s to each hot topic, a trickle to the cold ones, in one-second batches, until the hot
	// tasks run on different workers.
	batch := func(from int) []kafkatest.Record {
		var out []kafkatest.Record
		value := strings.Repeat("w", 1024)
		for i := from; i < from+1000; i++ {
			r := kafkatest.Record{Topic: hot[i%2], Key: []byte("k" + strconv.Itoa(i)), Value: []byte(value),
				Timestamp: recordsBase.Add(time.Duration(i) * time.Millisecond), Headers: []kafka.Header{{Key: "seq", Value: []byte(strconv.Itoa(i))}}}
			if i%50 == 0 {
				r.Topic, r.Value = cold[(i/50)%2], []byte("c"+strconv.Itoa(i))
			}
			out = append(out, r)
		}
		return out
	}
	loadAndAudit(t, topics, apart, "the hot tasks on different workers", batch)
	counts := map[string]int{}
	for _, w := range k1.taskWorkers(name) {
		counts[w]++
	}
	require.Equal(t, []int{2, 2}, slices.Sorted(maps.Values(counts)), "the counts stay even")
}
