package chaos

import (
	"context"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// Every case replicates one source topic of this many partitions with tasks.max of as many tasks, so that
// each of the three workers runs tasks.
const (
	sourcePartitions = 6
	taskCount        = 6
	workerCount      = 3
	valueSize        = 100
)

// volumes are the sizes of a run: small by default (the package runs in go test ./...), larger with
// -chaos.long.
type volumes struct {
	rate       int           // records/s over all partitions while records flow
	burst      int           // records of a burst (all partitions)
	iterations int           // kills per kill case
	outage     time.Duration // how long a broker stays down
	settle     time.Duration // how long records flow after a fault before the producer stops
	deadline   time.Duration // how long a case waits for recovery, a status or B to catch up
}

func vol() volumes {
	if *longRun {
		return volumes{rate: 2000, burst: 60_000, iterations: 5, outage: 20 * time.Second, settle: 10 * time.Second,
			deadline: 3 * time.Minute}
	}
	return volumes{rate: 300, burst: 3_000, iterations: 1, outage: 5 * time.Second, settle: 2 * time.Second,
		// Once recovered, replicating a short run's records takes about a second: a minute means it will not.
		deadline: time.Minute}
}

// scenario is one case's topic, cluster, producer and reader of B.
type scenario struct {
	t      *testing.T
	c      *cluster
	name   string         // connector
	topic  string         // on A
	remote string         // on B
	prod   *seqProducer   // of the current generation of the topic
	older  []*seqProducer // of the generations before it (a topic deleted and created again)
	tail   *remoteTailer

	audited bool // finish printed the audit
	stuck   bool // a recovery never came: later waits for B are cut short

	extra          map[string]string // connector settings of the case (exactly-once cases)
	refreshDefault bool              // the connector refreshes topics on MM2's default interval
	committed      bool              // B is read with read_committed
}

// newScenario creates a unique source topic on A, a sequenced producer for it (generation 1) and a cluster of
// three workers on a new database. The connector is not created yet (startConnector).
func newScenario(t *testing.T, prefix string) *scenario {
	t.Helper()
	topic := kafkatest.TopicName(t, prefix)
	createTopic(t, "A", topic, sourcePartitions)
	s := &scenario{t: t, name: "mm2-" + prefix, topic: topic, remote: "A." + topic}
	s.prod = newSeqProducer(t, topic, sourcePartitions, 1, valueSize)
	s.c = newCluster(t, workerCount)
	return s
}

// mirrorConfig is a MirrorSourceConnector A -> B for exactly the scenario's topic.
func (s *scenario) mirrorConfig() map[string]string {
	cfg := map[string]string{
		"connector.class":                       "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":                  "A",
		"target.cluster.alias":                  "B",
		"source.cluster.bootstrap.servers":      kafkatest.Bootstrap(s.t, "A"),
		"target.cluster.bootstrap.servers":      kafkatest.Bootstrap(s.t, "B"),
		"topics":                                regexp.QuoteMeta(s.topic),
		"tasks.max":                             fmt.Sprint(taskCount),
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		"refresh.topics.interval.seconds":       "1",
	}
	if s.refreshDefault {
		delete(cfg, "refresh.topics.interval.seconds")
	}
	maps.Copy(cfg, s.extra)
	return cfg
}

// startConnector creates the connector, waits until its tasks run on every worker, and starts reading B.
func (s *scenario) startConnector() connectorStatus {
	s.t.Helper()
	s.c.putConfig(s.name, s.mirrorConfig())
	st := s.c.awaitSpread(s.name, taskCount, 90*time.Second)
	s.t.Logf("connector running: %s", st.states())
	if s.committed {
		s.tail = tailRemoteCommitted(s.t, s.remote, sourcePartitions)
	} else {
		s.tail = tailRemote(s.t, s.remote, sourcePartitions)
	}
	// A case that fails before its audit still shows what B holds (runs before the reader closes).
	s.t.Cleanup(func() {
		if !s.t.Failed() || s.audited {
			return
		}
		recs, err := s.tail.snapshot(30 * time.Second)
		if err != nil {
			s.t.Logf("no audit at the failure: %v", err)
			return
		}
		s.t.Logf("audit at the failure (B was not necessarily caught up):\n%s", audit(s.remote, recs, s.expectations()...))
	})
	return st
}

// nextGeneration starts a new generation of the topic's records (sequences from 0 again), for a topic that
// was deleted and created again; the current producer must be stopped.
func (s *scenario) nextGeneration() {
	s.older = append(s.older, s.prod)
	s.prod = newSeqProducer(s.t, s.topic, sourcePartitions, s.prod.gen+1, valueSize)
}

// expectations are what B must hold of every generation so far.
func (s *scenario) expectations() []*expected {
	var out []*expected
	for _, p := range append(slices.Clone(s.older), s.prod) {
		out = append(out, p.expected())
	}
	return out
}

// awaitFlowing waits until every partition of B has a record produced after the call.
func (s *scenario) awaitFlowing(within time.Duration) {
	s.t.Helper()
	if _, err := s.tail.awaitPast(s.prod.gen, s.prod.Mark(), within); err != nil {
		s.t.Fatalf("records do not flow: %v", err)
	}
}

// awaitRecovery waits until every partition of B has a record of generation gen produced after mark, and
// returns how long after since that happened for the slowest partition. A failure to recover is reported
// (the test fails) but the case goes on to its audit.
func (s *scenario) awaitRecovery(what string, since time.Time, gen int, mark []int, within time.Duration) time.Duration {
	s.t.Helper()
	at, err := s.tail.awaitPast(gen, mark, within)
	if err != nil {
		s.t.Errorf("%s: %v", what, err)
		s.c.dumpStacks(what)
		s.stuck = true
		return within
	}
	var worst time.Duration
	per := make([]string, len(at))
	for p, a := range at {
		d := a.Sub(since)
		worst = max(worst, d)
		per[p] = fmt.Sprintf("%d:%.1fs", p, d.Seconds())
	}
	s.t.Logf("%s: every partition has new records on B %.1f s after the fault (per partition %s)", what, worst.Seconds(), strings.Join(per, " "))
	return worst
}

// auditNow waits until B holds everything the generations require so far, and audits what B holds.
func (s *scenario) auditNow(within time.Duration, exps ...*expected) *auditResult {
	s.t.Helper()
	return s.auditAfter(within, exps, exps)
}

// auditAfter waits until B holds what awaited requires (or the deadline), then audits B against exps.
func (s *scenario) auditAfter(within time.Duration, awaited, exps []*expected) *auditResult {
	s.t.Helper()
	if s.stuck {
		// Replication did not recover: waiting the full deadline again would only make the suite slower.
		within = min(within, 10*time.Second)
	}
	took, err := s.tail.awaitCaughtUp(within, awaited...)
	if err != nil {
		s.t.Errorf("%v", err)
		s.c.dumpStacks("not caught up")
	} else {
		s.t.Logf("caught up (%.1f s)", took.Seconds())
	}
	recs, err := s.tail.snapshot(2 * time.Minute)
	if err != nil {
		s.t.Fatalf("read B: %v", err)
	}
	return audit(s.remote, recs, exps...)
}

// finish stops the producer, waits until B is caught up (or the deadline), audits B and logs the table.
func (s *scenario) finish(within time.Duration) *auditResult {
	s.t.Helper()
	return s.finishAwaiting(within, false)
}

// finishAfterLostGenerations is finish for a case in which the older generations may have lost records with
// their deleted topic: it waits for the current generation only (each partition's records on B follow what
// reached B of the older ones), then audits all of them.
func (s *scenario) finishAfterLostGenerations(within time.Duration) *auditResult {
	s.t.Helper()
	return s.finishAwaiting(within, true)
}

func (s *scenario) finishAwaiting(within time.Duration, currentOnly bool) *auditResult {
	s.t.Helper()
	acked := s.prod.Stop()
	s.t.Logf("producer of generation %d stopped: acknowledged per partition %v", s.prod.gen, acked)
	exps := s.expectations()
	awaited := exps
	if currentOnly {
		awaited = exps[len(exps)-1:] // expectations ends with the current generation's
	}
	res := s.auditAfter(within, awaited, exps)
	s.audited = true
	s.t.Logf("\n%s", res)
	if res.Missing > 0 {
		// A second reader, started only now, reads B from its start again: it tells records the mirror never
		// wrote from records the test's own reader skipped.
		if recs, err := tailRemote(s.t, s.remote, sourcePartitions).snapshot(time.Minute); err != nil {
			s.t.Logf("second read of B: %v", err)
		} else {
			again := audit(s.remote, recs, s.expectations()...)
			s.t.Logf("second read of B from its start: missing %d (first read: %d)\n%s", again.Missing, res.Missing, again)
		}
	}
	if st, err := s.c.status(s.name); err == nil {
		s.t.Logf("final status: %s", st.states())
		if tr := st.traces(); tr != "" {
			s.t.Logf("status traces:\n%s", tr)
		}
	}
	return res
}

// otherThan returns the first running worker that is not excluded.
func (s *scenario) otherThan(excluded ...string) *worker {
	s.t.Helper()
	for _, w := range s.c.workers {
		if w.running() && !slices.Contains(excluded, w.id) {
			return w
		}
	}
	s.t.Fatalf("no running worker other than %v", excluded)
	return nil
}

// recreateTopic deletes the source topic on A and creates it again with as many partitions, retrying while A
// still finishes the deletion.
func (s *scenario) recreateTopic() {
	s.t.Helper()
	if err := newAdmin(s.t, "A").DeleteTopics(s.t.Context(), []string{s.topic}); err != nil {
		s.t.Fatalf("delete %s: %v", s.topic, err)
	}
	s.createTopic(sourcePartitions)
	s.t.Logf("source topic %s deleted and re-created with %d partitions", s.topic, sourcePartitions)
}

// createTopic creates the deleted source topic again with partitions partitions, retrying while A still
// finishes the deletion.
func (s *scenario) createTopic(partitions int) {
	s.t.Helper()
	ctx := s.t.Context()
	admin := newAdmin(s.t, "A")
	deadline := time.Now().Add(time.Minute)
	for {
		res, err := admin.CreateTopics(ctx, []kafka.NewTopic{{Name: s.topic, Partitions: partitions, ReplicationFactor: 1}})
		if err == nil {
			err = res[s.topic]
		}
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("re-create %s: %v", s.topic, err)
		}
		time.Sleep(200 * time.Millisecond) // the deletion is asynchronous: "marked for deletion" until done
	}
	awaitPartitions(s.t, "A", s.topic, partitions)
}

// durations summarises figures as "median X s, max Y s" over iterations.
func durations(ds []time.Duration) string {
	if len(ds) == 0 {
		return "none"
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	parts := make([]string, len(ds))
	for i, d := range ds {
		parts[i] = fmt.Sprintf("%.1f", d.Seconds())
	}
	return fmt.Sprintf("median %.1f s, max %.1f s (each: %s s)", s[len(s)/2].Seconds(), s[len(s)-1].Seconds(), strings.Join(parts, ", "))
}

func ints(xs []int) string {
	if len(xs) == 0 {
		return "none"
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return fmt.Sprintf("median %d, max %d (each: %v)", s[len(s)/2], s[len(s)-1], xs)
}

// waitFor holds a fault for d: the duration of an outage is the case's parameter, not a condition to await.
func waitFor(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
