package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirror"
)

// javaMM2 is a dedicated-mode Java MirrorMaker 2 (Kafka 4.1.1 from the harness's jars) started by a test.
//
// It runs as the test's own child process rather than through `scripts/harness mm2 start`, which keeps one
// MM2 per harness directory: tests running in parallel (and a developer's own harness MM2) would share it.
// Dedicated MM2 derives everything it owns from its cluster aliases — its Connect group (<source>-mm2), its
// internal topics (mm2-offsets.<source>.internal, ...) and the remote topic names (<source>.<topic>) — so
// unique aliases and a topics filter naming only the test's topic keep it apart from everything else.
type javaMM2 struct {
	t   *testing.T
	cmd *exec.Cmd
	log string
	// props is its mm2.properties.
	props string
	done  chan struct{}
}

func startJavaMM2(t *testing.T, sourceAlias, targetAlias, topicsRegex, extraProps string) *javaMM2 {
	t.Helper()
	java, libs := os.Getenv("JAVA_BIN"), os.Getenv("KAFKA_LIBS")
	if java == "" || libs == "" {
		t.Fatalf("JAVA_BIN and KAFKA_LIBS are not set: run the tests with ./scripts/test, or source the env of scripts/harness up")
	}
	dir := t.TempDir()
	props := fmt.Sprintf(`# dedicated-mode MirrorMaker 2 of %s
clusters = %[2]s, %[3]s
%[2]s.bootstrap.servers = %[4]s
%[3]s.bootstrap.servers = %[5]s
%[2]s->%[3]s.enabled = true
%[2]s->%[3]s.topics = %[6]s
%[3]s->%[2]s.enabled = false
emit.heartbeats.enabled = false
emit.checkpoints.enabled = false
sync.group.offsets.enabled = false
sync.topic.acls.enabled = false
sync.topic.configs.enabled = false
tasks.max = 2
replication.factor = 1
offset-syncs.topic.replication.factor = 1
checkpoints.topic.replication.factor = 1
heartbeats.topic.replication.factor = 1
offset.storage.replication.factor = 1
status.storage.replication.factor = 1
config.storage.replication.factor = 1
refresh.topics.interval.seconds = 5
%[3]s.scheduled.rebalance.max.delay.ms = 0
%[7]s
`, t.Name(), sourceAlias, targetAlias, kafkatest.Bootstrap(t, "A"), kafkatest.Bootstrap(t, "B"), topicsRegex, extraProps)
	propsFile := filepath.Join(dir, "mm2.properties")
	require.NoError(t, os.WriteFile(propsFile, []byte(props), 0o644))
	logFile := filepath.Join(dir, "mm2.log")
	log4j := filepath.Join(dir, "log4j2.xml")
	require.NoError(t, os.WriteFile(log4j, []byte(`<?xml version="1.0" encoding="UTF-8"?>
<Configuration status="WARN">
  <Appenders><File name="file" fileName="`+logFile+`"><PatternLayout pattern="[%d] %p %m (%c)%n"/></File></Appenders>
  <Loggers>
    <Root level="INFO"><AppenderRef ref="file"/></Root>
    <Logger name="org.apache.kafka.clients.consumer.ConsumerConfig" level="WARN"/>
    <Logger name="org.apache.kafka.clients.producer.ProducerConfig" level="WARN"/>
    <Logger name="org.apache.kafka.clients.admin.AdminClientConfig" level="WARN"/>
    <Logger name="org.apache.kafka.connect.runtime.ConnectorConfig" level="WARN"/>
    <Logger name="org.apache.kafka.connect.runtime.SourceConnectorConfig" level="WARN"/>
    <Logger name="org.apache.kafka.connect.runtime.TaskConfig" level="WARN"/>
    <Logger name="org.apache.kafka.connect.mirror.MirrorSourceConfig" level="WARN"/>
  </Loggers>
</Configuration>
`), 0o644))
	out, err := os.Create(filepath.Join(dir, "stdout.log"))
	require.NoError(t, err)
	cmd := exec.Command(java, "-Xms128m", "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.awt.headless=true",
		"-Dlog4j2.configurationFile="+log4j, "-cp", libs+"/*", "org.apache.kafka.connect.mirror.MirrorMaker", propsFile)
	cmd.Stdout, cmd.Stderr = out, out
	require.NoError(t, cmd.Start())
	m := &javaMM2{t: t, cmd: cmd, log: logFile, props: propsFile, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		out.Close()
		close(m.done)
	}()
	t.Cleanup(func() {
		select {
		case <-m.done:
		default:
			_ = cmd.Process.Signal(syscall.SIGKILL)
			<-m.done
		}
		if t.Failed() {
			t.Logf("Java MM2 log: %s (last lines below)\n%s", logFile, logTail(logFile, 30))
		}
	})
	return m
}

// stop stops MM2 the way its init scripts do, with SIGTERM: the shutdown hook stops the herders, whose tasks
// commit the offsets of every acknowledged record before the process exits.
func (m *javaMM2) stop() time.Duration {
	m.t.Helper()
	began := time.Now()
	require.NoError(m.t, m.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-m.done:
	case <-time.After(60 * time.Second):
		m.t.Fatalf("Java MM2 did not stop within 60 s of SIGTERM")
	}
	return time.Since(began)
}

// kill ends MM2 with SIGKILL, as a crash would: nothing is committed on the way out.
func (m *javaMM2) kill() {
	m.t.Helper()
	require.NoError(m.t, m.cmd.Process.Signal(syscall.SIGKILL))
	<-m.done
}

// alive fails the test if MM2 exited.
func (m *javaMM2) alive() {
	m.t.Helper()
	select {
	case <-m.done:
		m.t.Fatalf("Java MM2 exited early; log %s:\n%s", m.log, logTail(m.log, 40))
	default:
	}
}

// grep returns the log lines matching re.
func (m *javaMM2) grep(re string) []string {
	raw, _ := os.ReadFile(m.log)
	var out []string
	for _, l := range strings.Split(string(raw), "\n") {
		if regexp.MustCompile(re).MatchString(l) {
			out = append(out, l)
		}
	}
	return out
}

// producePaced writes records with one idempotent producer, batch records every pause, and waits until all
// are acknowledged: a stream that keeps arriving while MM2 stops.
func producePaced(bootstrap string, records []kafkatest.Record, batch int, pause time.Duration) error {
	var failed atomic.Pointer[error]
	p, err := kafka.NewProducer(map[string]string{"bootstrap.servers": bootstrap, "enable.idempotence": "true", "linger.ms": "5"},
		slog.New(slog.DiscardHandler), func(d kafka.Delivery) {
			if d.Err != nil {
				failed.CompareAndSwap(nil, &d.Err)
			}
		})
	if err != nil {
		return err
	}
	defer p.Close()
	for i, r := range records {
		if i > 0 && i%batch == 0 {
			time.Sleep(pause)
		}
		for {
			err := p.Produce(r.Topic, r.Partition, r.Key, r.Value, r.Headers, r.Timestamp, nil)
			if err == kafka.ErrQueueFull {
				time.Sleep(time.Millisecond)
				continue
			}
			if err != nil {
				return err
			}
			break
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if left := p.Flush(ctx); left > 0 {
		return fmt.Errorf("%d records not acknowledged within 2 minutes", left)
	}
	if e := failed.Load(); e != nil {
		return *e
	}
	return nil
}

func logTail(file string, n int) string {
	raw, _ := os.ReadFile(file)
	lines := strings.Split(strings.TrimRight(string(raw), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// handoverRecords builds per partition records whose values carry the partition and a sequence number that
// counts from 0 in each partition: p:<partition>:<seq>.
func handoverRecords(topic string, partitions int, from []int, n int) []kafkatest.Record {
	out := make([]kafkatest.Record, 0, n*partitions)
	for i := range n {
		for p := range partitions {
			seq := from[p] + i
			out = append(out, kafkatest.Record{Topic: topic, Partition: int32(p), Key: []byte("k" + strconv.Itoa(seq)),
				Value: fmt.Appendf(nil, "p:%d:%d", p, seq), Timestamp: time.Now()})
		}
	}
	for p := range partitions {
		from[p] += n
	}
	return out
}

// handoverAudit is what one remote partition holds compared with its source partition's sequence 0..want-1.
type handoverAudit struct {
	records, missing, duplicated, reordered int
}

func auditHandover(t *testing.T, partition int, recs []kafkatest.Record, want int) handoverAudit {
	t.Helper()
	a := handoverAudit{records: len(recs)}
	seen := make([]bool, want)
	top := -1
	for _, r := range recs {
		var p, seq int
		_, err := fmt.Sscanf(string(r.Value), "p:%d:%d", &p, &seq)
		require.NoError(t, err, "value %q", r.Value)
		require.Equal(t, partition, p, "a record of source partition %d in remote partition %d", p, partition)
		require.Less(t, seq, want, "a record never produced")
		switch {
		case seen[seq]:
			a.duplicated++
		case seq < top:
			a.reordered++ // first seen after a later one
		}
		seen[seq] = true
		top = max(top, seq)
	}
	for _, s := range seen {
		if !s {
			a.missing++
		}
	}
	return a
}

// TestHandoverFromJavaMM2 replaces a running Java MirrorMaker 2 with kmirror: MM2 replicates a 3-partition
// topic while records keep arriving and is stopped (SIGTERM) in the middle of it; `kmirror mm2-offsets
// --apply` moves MM2's committed source offsets into a STOPPED kmirror connector with the same aliases, which
// is resumed and replicates the rest. Every remote partition must then hold its source sequence with nothing
// missing and nothing out of order; records written twice may only be those MM2 wrote past its last offset
// commit — none, since a clean stop commits. MM2 keeps Connect's 60 s offset.flush.interval.ms, longer than
// the test: the offsets handed over are the ones it commits as it stops, as in a real replacement.
func TestHandoverFromJavaMM2(t *testing.T) {
	t.Parallel()
	testHandover(t, false)
}

// TestHandoverFromJavaMM2AfterCrash is the hand-over from an MM2 that died (SIGKILL) while replicating, with
// offsets flushed every second: kmirror re-sends what MM2 wrote after its last commit, exactly as a restarted
// MM2 would, and nothing else.
func TestHandoverFromJavaMM2AfterCrash(t *testing.T) {
	t.Parallel()
	testHandover(t, true)
}

func testHandover(t *testing.T, crash bool) {
	const partitions = 3
	testStart := time.Now()
	at := func() time.Duration { return time.Since(testStart).Round(100 * time.Millisecond) }
	bin := kmirrorBinary(t)
	k := startKmirror(t, "")
	src, dst := uniqueAlias("hos"), uniqueAlias("hot")
	topic := kafkatest.TopicName(t, "ho")
	kafkatest.CreateTopic(t, "A", topic, partitions, nil)
	remote := src + "." + topic
	next := make([]int, partitions)
	produced := 0
	produce := func(n int) {
		kafkatest.Produce(t, "A", handoverRecords(topic, partitions, next, n))
		produced += n * partitions
	}
	extra := ""
	if crash {
		// A worker setting: dedicated MM2 takes it only with the target alias prefix; a top-level
		// offset.flush.interval.ms is silently ignored (MirrorMakerConfig.workerConfig passes on just a few
		// top-level prefixes).
		extra = dst + ".offset.flush.interval.ms = 1000"
	}

	// 1. Java MM2 replicates what is there ...
	produce(1000)
	began := time.Now()
	t.Logf("[%s] set up; starting Java MM2", at())
	mm2 := startJavaMM2(t, src, dst, regexp.QuoteMeta(topic), extra)
	for deadline := time.Now().Add(90 * time.Second); kafkatest.EndOffsets(t, "B", remote, partitions) < int64(produced); {
		mm2.alive()
		if time.Now().After(deadline) {
			t.Fatalf("Java MM2 did not replicate the first %d records within 90 s; log %s:\n%s", produced, mm2.log, logTail(mm2.log, 40))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("[%s] Java MM2 started and replicated %d records in %s", at(), produced, time.Since(began).Round(100*time.Millisecond))
	if crash {
		// Let a periodic flush commit the first records, so that the crash leaves offsets behind.
		for deadline := time.Now().Add(30 * time.Second); len(mm2.grep(`Committing offsets for \d+ acknowledged messages`)) == 0; {
			mm2.alive()
			if time.Now().After(deadline) {
				t.Fatalf("Java MM2 committed no offsets within 30 s with %s", extra)
			}
			time.Sleep(100 * time.Millisecond)
		}
		time.Sleep(1500 * time.Millisecond)
	}

	// 2. ... and is stopped (or dies) while more records arrive and it copies them.
	var wg sync.WaitGroup
	var produceErr error
	batch := handoverRecords(topic, partitions, next, 1500)
	produced += len(batch)
	wg.Add(1)
	bootstrapA := kafkatest.Bootstrap(t, "A")
	go func() {
		defer wg.Done()
		produceErr = producePaced(bootstrapA, batch, 60, 50*time.Millisecond) // about 1.5 s of records
	}()
	before := kafkatest.EndOffsets(t, "B", remote, partitions)
	for deadline := time.Now().Add(30 * time.Second); kafkatest.EndOffsets(t, "B", remote, partitions) == before; {
		mm2.alive()
		if time.Now().After(deadline) {
			t.Fatalf("Java MM2 replicated none of the records produced after the first %d within 30 s", before)
		}
		time.Sleep(10 * time.Millisecond)
	}
	how := "killed"
	if crash {
		mm2.kill()
	} else {
		how = fmt.Sprintf("stopped in %s", mm2.stop().Round(10*time.Millisecond))
	}
	wg.Wait()
	require.NoError(t, produceErr)
	onB := kafkatest.PartitionEnds(t, "B", remote, partitions)
	onA := kafkatest.PartitionEnds(t, "A", topic, partitions)
	commits := mm2.grep(`Committing offsets for \d+ acknowledged messages`)
	t.Logf("[%s] Java MM2 %s; source ends %v, on B %v; its offset commits: %d\n%s", at(), how, onA, onB, len(commits), strings.Join(commits, "\n"))

	// 3. kmirror's connector, created STOPPED with MM2's aliases and remote topic names, takes MM2's offsets.
	name := "ho-" + src
	cfg := mirrorConfig(t, regexp.QuoteMeta(topic), map[string]any{"source.cluster.alias": src, "target.cluster.alias": dst, "tasks.max": "2"})
	code, body := k.do(http.MethodPost, "/connectors", map[string]any{"name": name, "config": cfg, "initial_state": "STOPPED"})
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "STOPPED", 30*time.Second)

	printed := runKmirrorCommand(t, bin, "mm2-offsets", "--bootstrap-servers", kafkatest.Bootstrap(t, "B"), "--source-alias", src, "--timeout", "30s")
	var fromJava struct {
		Offsets []struct {
			Partition struct {
				Cluster   string `json:"cluster"`
				Partition int    `json:"partition"`
				Topic     string `json:"topic"`
			} `json:"partition"`
			Offset struct {
				Offset int64 `json:"offset"`
			} `json:"offset"`
		} `json:"offsets"`
	}
	require.NoError(t, json.Unmarshal([]byte(printed), &fromJava), "mm2-offsets prints the PATCH body: %s", printed)
	committed := make([]int64, partitions)
	for i := range committed {
		committed[i] = -1
	}
	for _, o := range fromJava.Offsets {
		require.Equal(t, src, o.Partition.Cluster)
		if o.Partition.Topic != topic {
			// MM2 replicates heartbeats topics whatever its filter says; other tests' flows may have left
			// some on the shared cluster A.
			require.True(t, isHeartbeatsTopic(t, o.Partition.Topic), "an offset of %s", o.Partition.Topic)
			continue
		}
		committed[o.Partition.Partition] = o.Offset.Offset
	}
	applied := runKmirrorCommand(t, bin, "mm2-offsets", "--bootstrap-servers", kafkatest.Bootstrap(t, "B"), "--source-alias", src,
		"--apply", k.url, "--kmirror-connector", name)
	require.Contains(t, applied, "have been altered successfully")
	_, offs := k.do(http.MethodGet, "/connectors/"+name+"/offsets", nil)
	stored := make([]int64, partitions)
	for i := range stored {
		stored[i] = -1
	}
	for _, o := range offs.(map[string]any)["offsets"].([]any) {
		part := o.(map[string]any)["partition"].(map[string]any)
		if part["topic"] != topic {
			continue // a heartbeats topic's, as above
		}
		stored[mustInt(t, part["partition"])] = mustInt(t, o.(map[string]any)["offset"].(map[string]any)["offset"])
	}
	require.Equal(t, committed, stored, "kmirror stores the offsets Java MM2 committed")
	// What MM2 wrote to B past its committed offsets is all kmirror may write a second time.
	beyond := int64(0)
	for p := range partitions {
		require.GreaterOrEqual(t, committed[p], int64(0), "Java MM2 committed an offset for partition %d", p)
		beyond += onB[p] - (committed[p] + 1)
		require.GreaterOrEqual(t, onB[p], committed[p]+1, "MM2 committed only what the target acknowledged")
	}
	t.Logf("Java MM2's committed offsets %v (the last replicated record of each partition); written to B past them: %d", committed, beyond)

	// 4. kmirror resumes and replicates the rest, including records produced after the hand-over.
	code, _ = k.do(http.MethodPut, "/connectors/"+name+"/resume", nil)
	require.Equal(t, http.StatusAccepted, code)
	resumed := time.Now()
	produce(500)
	want := next[0]
	perPartition, total := awaitRemoteSequences(t, remote, partitions, want)
	for p, a := range perPartition {
		t.Logf("partition %d: %d records on B for %d produced: %d missing, %d duplicated, %d reordered; MM2 wrote %d past its commit",
			p, a.records, want, a.missing, a.duplicated, a.reordered, onB[p]-(committed[p]+1))
	}
	t.Logf("[%s] kmirror completed the copy %s after its resume", at(), time.Since(resumed).Round(100*time.Millisecond))
	t.Logf("audit: %d produced, %d on B: %d missing, %d duplicated, %d reordered; MM2 wrote %d records past its committed offsets",
		produced, total.records, total.missing, total.duplicated, total.reordered, beyond)
	require.Equal(t, want*partitions, produced)
	require.Zero(t, total.missing, "records missing on B (kmirror did not replicate them within 90 s, or skipped them)")
	require.Zero(t, total.reordered, "records out of order on B")
	require.LessOrEqual(t, int64(total.duplicated), beyond, "only records MM2 wrote past its commit may arrive twice")
}

// awaitRemoteSequences waits up to 90 s until every remote partition holds its source sequence 0..want-1, then
// audits each partition and the total.
func awaitRemoteSequences(t *testing.T, remote string, partitions, want int) ([]handoverAudit, handoverAudit) {
	t.Helper()
	// Wait for every sequence number rather than for a record count: records sent twice count twice.
	var got map[kafkatest.Partition][]kafkatest.Record
	complete := func() bool {
		for _, e := range kafkatest.PartitionEnds(t, "B", remote, partitions) {
			if e < int64(want) {
				return false
			}
		}
		got = kafkatest.ReadPartitions(t, "B", map[string]int{remote: partitions}, 0)
		for p := range partitions {
			if auditHandover(t, p, got[kafkatest.Partition{Topic: remote, Partition: int32(p)}], want).missing > 0 {
				return false
			}
		}
		return true
	}
	for deadline := time.Now().Add(90 * time.Second); !complete() && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
	}
	per := make([]handoverAudit, partitions)
	var total handoverAudit
	for p := range partitions {
		a := auditHandover(t, p, got[kafkatest.Partition{Topic: remote, Partition: int32(p)}], want)
		per[p] = a
		total.records += a.records
		total.missing += a.missing
		total.duplicated += a.duplicated
		total.reordered += a.reordered
	}
	return per, total
}

// runKmirror runs the kmirror binary and returns its stdout, failing the test (with stderr) if it fails.
func runKmirrorCommand(t *testing.T, bin string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	t.Logf("kmirror %s:\n%s", strings.Join(args[:1], " "), strings.TrimSpace(stderr.String()))
	require.NoError(t, err, "kmirror %v\nstdout: %s\nstderr: %s", args, stdout.String(), stderr.String())
	return stdout.String()
}

// isHeartbeatsTopic tells whether MM2's default replication policy takes topic for a heartbeats topic, which
// a source connector replicates whatever its topics filter says.
func isHeartbeatsTopic(t *testing.T, topic string) bool {
	policy, err := mirror.NewReplicationPolicy(map[string]string{})
	require.NoError(t, err)
	return policy.IsHeartbeatsTopic(topic)
}
