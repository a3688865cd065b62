package source

import (
	"log/slog"
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/checkpoint"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/tasks"
)

// The worker's settings reach the connectors and tasks the plugin makes: how partitions are dealt, the data path,
// and the partition limits above which replication clients run without librdkafka statistics.
func TestPluginSettingsReachItsConnectorsAndTasks(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	p := New(log, nil).WithTaskAssignment(AssignPartitions).WithDataPath(DataPathGo).WithConsumerStatsLimit(7).WithProducerStatsLimit(9)
	reg := connectors.NewRegistry(func(string) *slog.Logger { return log }, clientconfig.Options{}, p, checkpoint.New(nil))
	config := fakePlannerConfig("t")
	conn, err := reg.NewConnector("mm2", config)
	require.NoError(t, err)
	require.Equal(t, AssignPartitions, conn.(*sourceConnector).assignment)

	config[connectors.TaskClassKey] = connectors.SourceTaskClass
	config[mirror.TaskAssignedPartitionsConfig] = mirror.EncodeAssignedPartitions([]mirror.TopicPartition{{Topic: "t"}})
	config[mirror.TaskIndexConfig] = "0"
	task, err := reg.NewTask(tasks.TaskID{Connector: "mm2"}, config)
	require.NoError(t, err)
	st := task.(*sourceTask)
	require.Equal(t, DataPathGo, st.dataPath)
	require.Equal(t, 7, st.consumerStatsMax)
	require.Equal(t, 9, st.producerStatsMax)

	require.Equal(t, AssignTopics, New(log, nil).WithTaskAssignment("").assign, "empty: the default")
}

// A run whose consumer has no librdkafka statistics takes Java's records-lag from its own samples; its series
// leave with the run.
func TestConsumerWithoutStatisticsStillShowsRecordsLag(t *testing.T) {
	reg := metrics.New()
	r := &sourceRun{t: &sourceTask{id: tasks.TaskID{Connector: "mm2", Task: 1}, metrics: reg, consumerStatsMax: 10},
		log: slog.New(slog.DiscardHandler), consumerProps: map[string]string{"client.id": "mm2-consumer-1"}}
	r.noteConsumerStatsOff(11)
	r.noteProducerStatsOff(11)
	require.NotNil(t, r.consumerLags)
	r.consumerLags([]metrics.PartitionLag{{Topic: "t", Partition: 0, Lag: 5}})
	series := seriesOf(t, reg, "clientid", "mm2-consumer-1")
	require.NotEmpty(t, series, "records-lag from the task's sample")
	r.removeConsumerLags()
	require.Empty(t, seriesOf(t, reg, "clientid", "mm2-consumer-1"))

	none := &sourceRun{t: &sourceTask{}, log: r.log}
	none.noteConsumerStatsOff(11)
	require.Nil(t, none.consumerLags, "without metrics nothing takes the statistics' place")
}

// The C clients get the Go clients' librdkafka properties without confluent-kafka-go's own, with statistics as
// asked; an idempotent producer connects to every broker at once.
func TestCPathClientProperties(t *testing.T) {
	props := map[string]string{"bootstrap.servers": "b:9092", "go.events.channel.enable": "true", "enable.idempotence": "true"}
	got := cpathProducerProps(props, 5*time.Second)
	require.Equal(t, map[string]string{"bootstrap.servers": "b:9092", "enable.idempotence": "true", "statistics.interval.ms": "5000",
		"enable.sparse.connections": "false"}, got)
	delete(props, "enable.idempotence")
	got = cpathProps(props, 0)
	require.Equal(t, map[string]string{"bootstrap.servers": "b:9092", "statistics.interval.ms": "0"}, got)
	require.True(t, maps.Equal(map[string]string{"bootstrap.servers": "b:9092", "statistics.interval.ms": "0"}, cpathProducerProps(props, 0)))
}
