package server_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// javaTranslateOffsets asks Java MirrorMaker 2's client library what
// RemoteClusterUtils.translateOffsets({bootstrap.servers: cluster}, remoteAlias, group) returns: the last
// checkpoint of group per partition of <remoteAlias>.checkpoints.internal on the cluster, as downstream topic
// partition -> offset. It runs testdata/java/TranslateOffsets.java with the harness's Java and Kafka jars
// (JAVA_BIN, KAFKA_LIBS) and fails the test, never skips it, when they are missing or the program fails. Each
// call starts a JVM (about 2 s).
func javaTranslateOffsets(t *testing.T, cluster, remoteAlias, group string) map[kafkatest.Partition]int64 {
	t.Helper()
	javaBin, libs := os.Getenv("JAVA_BIN"), os.Getenv("KAFKA_LIBS")
	if javaBin == "" || libs == "" {
		t.Fatalf("JAVA_BIN and KAFKA_LIBS are not set: run the tests with ./scripts/test, or source the env file "+
			"scripts/harness up writes (JAVA_BIN=%q, KAFKA_LIBS=%q)", javaBin, libs)
	}
	jars, err := filepath.Glob(filepath.Join(libs, "connect-mirror-client-*.jar"))
	require.NoError(t, err)
	require.NotEmpty(t, jars, "KAFKA_LIBS=%s has no connect-mirror-client jar (RemoteClusterUtils)", libs)
	program, err := filepath.Abs(filepath.Join("testdata", "java", "TranslateOffsets.java"))
	require.NoError(t, err)

	// The program's own deadline for reading the checkpoints topic is 30 s; the JVM's start, the in-memory
	// compile of the source file and the consumer's metadata waits (up to its 60 s default.api.timeout.ms when
	// the topic does not exist) come on top.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, javaBin,
		"-Xmx256m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", // a short-lived client: start fast
		"-Dfile.encoding=UTF-8",
		"-cp", filepath.Join(libs, "*"), program,
		kafkatest.Bootstrap(t, cluster), remoteAlias, group, "30000")
	// A UTF-8 locale, so that the JVM decodes non-ASCII arguments (group names) as UTF-8.
	cmd.Env = append(os.Environ(), "LC_ALL=C.UTF-8")
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	err = cmd.Run()
	took := time.Since(start)
	if ctx.Err() != nil {
		t.Fatalf("TranslateOffsets %s %s did not finish within %s; stderr:\n%s", remoteAlias, group, took.Round(time.Millisecond), stderr.String())
	}
	if err != nil {
		t.Fatalf("TranslateOffsets %s %s: %v; stderr:\n%s", remoteAlias, group, err, stderr.String())
	}
	t.Logf("java RemoteClusterUtils.translateOffsets(%s, %q) took %s (JVM start included)", remoteAlias, group, took.Round(time.Millisecond))

	out := map[kafkatest.Partition]int64{}
	for _, line := range strings.Split(strings.TrimSuffix(stdout.String(), "\n"), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, "\t")
		require.Len(t, f, 3, "TranslateOffsets printed %q", line)
		p, err := strconv.ParseInt(f[1], 10, 32)
		require.NoError(t, err, "partition in %q", line)
		off, err := strconv.ParseInt(f[2], 10, 64)
		require.NoError(t, err, "offset in %q", line)
		tp := kafkatest.Partition{Topic: f[0], Partition: int32(p)}
		_, dup := out[tp]
		require.False(t, dup, "TranslateOffsets printed %s [%d] twice", tp.Topic, tp.Partition)
		out[tp] = off
	}
	return out
}

// TestJavaReadsCheckpoints: checkpoints in kmirror's encoding read back through Java's
// RemoteClusterUtils.translateOffsets as exactly the offsets written: the last checkpoint per partition wins,
// other groups' checkpoints are ignored, metadata and non-ASCII group names do not shift the decoding.
func TestJavaReadsCheckpoints(t *testing.T) {
	t.Parallel()
	source := uniqueAlias("ckA")
	topic := source + ".checkpoints.internal"
	kafkatest.CreateTopic(t, "B", topic, 1, map[string]string{"cleanup.policy": "compact"})

	group, other := "grüppe-"+source, "other-"+source
	orders, payments := source+".orders", source+".payments"
	checkpoints := []mirror.Checkpoint{
		{Group: group, Topic: orders, Partition: 0, UpstreamOffset: 100, DownstreamOffset: 90},
		{Group: group, Topic: orders, Partition: 1, UpstreamOffset: 7, DownstreamOffset: 7, Metadata: "commit-metadata ✓"},
		{Group: other, Topic: orders, Partition: 0, UpstreamOffset: 999, DownstreamOffset: 998},
		{Group: group, Topic: orders, Partition: 0, UpstreamOffset: 250, DownstreamOffset: 231}, // replaces 90
		{Group: group, Topic: payments, Partition: 11, UpstreamOffset: 1 << 40, DownstreamOffset: 1<<40 + 3},
		{Group: group, Topic: payments, Partition: 2, UpstreamOffset: 0, DownstreamOffset: 0},
		{Group: other, Topic: payments, Partition: 5, UpstreamOffset: 5, DownstreamOffset: 4},
	}
	now := time.Now()
	records := make([]kafkatest.Record, 0, len(checkpoints))
	for _, c := range checkpoints {
		key, err := c.Key()
		require.NoError(t, err)
		value, err := c.Value()
		require.NoError(t, err)
		records = append(records, kafkatest.Record{Topic: topic, Partition: 0, Key: key, Value: value, Timestamp: now})
	}
	kafkatest.Produce(t, "B", records)

	require.Equal(t, map[kafkatest.Partition]int64{
		{Topic: orders, Partition: 0}:    231,
		{Topic: orders, Partition: 1}:    7,
		{Topic: payments, Partition: 2}:  0,
		{Topic: payments, Partition: 11}: 1<<40 + 3,
	}, javaTranslateOffsets(t, "B", source, group))
	require.Equal(t, map[kafkatest.Partition]int64{
		{Topic: orders, Partition: 0}:   998,
		{Topic: payments, Partition: 5}: 4,
	}, javaTranslateOffsets(t, "B", source, other))
}
