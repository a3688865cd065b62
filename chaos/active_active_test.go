package chaos

import (
	"fmt"
	"maps"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// TestActiveActive runs two clusters that both take writes on the same topic name: producers on A and on B,
// flows A→B and B→A under IdentityReplicationPolicy (the provenance header keeps each flow from copying back
// what the other brought), and a checkpoint connector each way. While the producers write, a worker that is
// not the leader is killed -9 and started again, and broker B is killed and started again.
// Expected, on each cluster: every record either producer had acknowledged (each side's own records once, the
// other's at least once), none three times or more, in order; once the producers stop, the record counts stay
// the same (no loop). A group reading the topic on A, translated to B by the checkpoint connector, skips no
// record of either origin there (the records it reads again are counted and reported). A's producer writes an
// application header, which every copy keeps; B's writes records without any header, so the flow B→A stamps
// them as B's and the flow A→B recognises their copies by that stamp alone.
func TestActiveActive(t *testing.T) {
	defaultPassOnly(t)
	activeActiveCase(t, "aa", true)
}

// aaTasks is tasks.max of each of the two flows: together they give every worker tasks.
const aaTasks = 3

// appHeader is the header the producers write (unless stripped): a copy must keep it.
const appHeader = "app-trace"

// aaDuration is how long the producers write: a minute by default, ten minutes with -chaos.long.
func aaDuration() time.Duration {
	if *longRun {
		return 10 * time.Minute
	}
	return time.Minute
}

// aaStable is how long the record counts must stay unchanged once the producers stopped and both clusters
// caught up: a loop would copy each record again within a second or two.
const aaStable = 15 * time.Second

// aaCase is the topic, the producers, the readers and the workers of an active-active case.
type aaCase struct {
	t     *testing.T
	c     *cluster
	name  string
	topic string                   // the same name on A and on B
	prod  map[string]*seqProducer  // by cluster: A's writes generation 1, B's generation 2
	tail  map[string]*remoteTailer // by cluster: the topic there, read from its start
}

var aaClusters = []string{"A", "B"}

// other returns the cluster that is not c.
func other(c string) string {
	if c == "A" {
		return "B"
	}
	return "A"
}

func activeActiveCase(t *testing.T, prefix string, stripB bool) {
	v := vol()
	a := newAACase(t, prefix, stripB)
	a.start(v.deadline)
	run := aaDuration()
	rate := max(v.rate/2, 50)
	began := time.Now()
	for _, cl := range aaClusters {
		a.prod[cl].Run(rate)
	}
	a.awaitFlowing("start", time.Minute)

	// A worker that is not the leader: kill -9, recovery, restart.
	waitFor(t.Context(), time.Until(began.Add(run/3)))
	victim := a.otherThanLeader()
	t.Logf("kill -9 %s", victim.id)
	victim.Kill9()
	a.awaitFlowing("after the kill -9 of "+victim.id, workerTTL+v.deadline)
	victim.Restart()
	a.awaitFlowing("after "+victim.id+" restarted", v.deadline)

	// Broker B: kill -9, outage, start.
	waitFor(t.Context(), time.Until(began.Add(2*run/3)))
	downAt := time.Now()
	suite.harness.killKafka(t, "B")
	waitFor(t.Context(), v.outage)
	suite.harness.startKafka(t, "B")
	t.Logf("broker B down for %.1f s", time.Since(downAt).Seconds())
	a.awaitFlowing("after broker B restarted", v.deadline)

	waitFor(t.Context(), time.Until(began.Add(run)))
	for _, cl := range aaClusters {
		acked := a.prod[cl].Stop()
		t.Logf("producer on %s stopped after %.0f s: acknowledged per partition %v", cl, time.Since(began).Seconds(), acked)
	}
	lost := a.excludeLost("B")
	res, thrice, back, caughtUp := a.auditBoth(v.deadline)
	grew := a.countsGrow(aaStable)
	headers := a.checkHeaders(stripB)
	groups := a.checkGroup(v.deadline)
	a.logMapSize()

	for _, cl := range aaClusters {
		r := res[cl]
		t.Logf("SUMMARY %s on %s: caught up %s; missing %d, duplicated %d, three times or more %d, own records copied back %d, reordered %d, unparsed %d; lost by broker B itself %d; counts grew %d in %s after the producers stopped; headers wrong %d",
			t.Name(), cl, caughtUp[cl], r.Missing, r.Duplicated, thrice[cl], back[cl], r.Reordered, r.Unparsed, lost, grew[cl], aaStable, headers)
		expectClean(t, r, "missing", "reordered")
		if thrice[cl] > 0 {
			t.Errorf("%s: %d records three times or more (a loop, or re-sends on re-sends)", cl, thrice[cl])
		}
		if back[cl] > 0 {
			t.Errorf("%s: %d of its own producer's records came back to it", cl, back[cl])
		}
		if grew[cl] != 0 {
			t.Errorf("%s: %d records arrived in the %s after the producers stopped and both clusters caught up: records go round", cl, grew[cl], aaStable)
		}
	}
	if headers > 0 {
		t.Errorf("%d records with wrong headers (see above)", headers)
	}
	t.Logf("SUMMARY %s group: %s", t.Name(), groups)
}

// newAACase creates the topic on both clusters, a producer on each (B's without headers when stripB) and three
// workers.
func newAACase(t *testing.T, prefix string, stripB bool) *aaCase {
	t.Helper()
	topic := kafkatest.TopicName(t, prefix)
	a := &aaCase{t: t, name: prefix, topic: topic, prod: map[string]*seqProducer{}, tail: map[string]*remoteTailer{}}
	for i, cl := range aaClusters {
		createTopic(t, cl, topic, sourcePartitions)
		sp := newSeqProducerWith(t, topic, sourcePartitions, i+1, valueSize, map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, cl)})
		if !(stripB && cl == "B") {
			sp.headers = []kafka.Header{{Key: appHeader, Value: []byte("from " + cl)}}
		}
		a.prod[cl] = sp
	}
	a.c = newCluster(t, workerCount)
	return a
}

// flowConfig is the MirrorSourceConnector src → dst for the topic, keeping its name.
func (a *aaCase) flowConfig(src, dst string) map[string]string {
	return map[string]string{
		"connector.class":                       "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":                  src,
		"target.cluster.alias":                  dst,
		"source.cluster.bootstrap.servers":      kafkatest.Bootstrap(a.t, src),
		"target.cluster.bootstrap.servers":      kafkatest.Bootstrap(a.t, dst),
		"replication.policy.class":              "org.apache.kafka.connect.mirror.IdentityReplicationPolicy",
		"topics":                                regexp.QuoteMeta(a.topic),
		"tasks.max":                             fmt.Sprint(aaTasks),
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		"sync.topic.configs.enabled":            "false",
		"refresh.topics.interval.seconds":       "1",
	}
}

// checkpointConfig is the MirrorCheckpointConnector src → dst for the case's groups.
func (a *aaCase) checkpointConfig(src, dst string) map[string]string {
	cfg := a.flowConfig(src, dst)
	for _, k := range []string{"tasks.max", "replication.factor", "offset-syncs.topic.replication.factor", "sync.topic.acls.enabled", "sync.topic.configs.enabled", "refresh.topics.interval.seconds"} {
		delete(cfg, k)
	}
	maps.Copy(cfg, map[string]string{
		"connector.class":                      "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"groups":                               regexp.QuoteMeta(a.groupPrefix()) + ".*",
		"emit.checkpoints.interval.seconds":    "1",
		"refresh.groups.interval.seconds":      "1",
		"checkpoints.topic.replication.factor": "1",
	})
	return cfg
}

func (a *aaCase) flowName(src, dst string) string { return a.name + "-" + src + dst }

func (a *aaCase) checkpointName(src, dst string) string { return a.name + "-ck-" + src + dst }

func (a *aaCase) groupPrefix() string { return "g-" + a.topic }

// start creates the four connectors, waits until the flows run on every worker, and starts reading both
// clusters.
func (a *aaCase) start(within time.Duration) {
	a.t.Helper()
	for _, src := range aaClusters {
		a.c.putConfig(a.flowName(src, other(src)), a.flowConfig(src, other(src)))
		a.c.putConfig(a.checkpointName(src, other(src)), a.checkpointConfig(src, other(src)))
	}
	for _, src := range aaClusters {
		st := a.c.awaitRunning(a.flowName(src, other(src)), aaTasks, 90*time.Second)
		a.t.Logf("%s running: %s", a.flowName(src, other(src)), st.states())
	}
	a.awaitSpread(within)
	for _, cl := range aaClusters {
		a.tail[cl] = tailTopic(a.t, cl, a.topic, sourcePartitions)
	}
}

// awaitSpread waits until every running worker runs a task of one of the flows.
func (a *aaCase) awaitSpread(within time.Duration) {
	a.t.Helper()
	deadline := time.Now().Add(within)
	for {
		busy := map[string]bool{}
		ok := true
		for _, src := range aaClusters {
			st, err := a.c.status(a.flowName(src, other(src)))
			ok = ok && err == nil && st.allIn("RUNNING", aaTasks)
			for _, w := range st.taskWorkers() {
				busy[w] = true
			}
		}
		for _, w := range a.c.workers {
			ok = ok && (!w.running() || busy[w.id])
		}
		if ok {
			return
		}
		if time.Now().After(deadline) {
			a.t.Fatalf("the flows' tasks are not RUNNING on every worker within %s (busy: %v)", within, busy)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// otherThanLeader returns a running worker that does not hold the leader lease.
func (a *aaCase) otherThanLeader() *worker {
	a.t.Helper()
	leader := a.c.awaitLeader(30 * time.Second)
	for _, w := range a.c.workers {
		if w.running() && w.id != leader.id {
			return w
		}
	}
	a.t.Fatalf("no running worker other than the leader %s", leader.id)
	return nil
}

// awaitFlowing waits until each cluster holds, on every partition, a copy of a record the other cluster's
// producer wrote after the call: both flows replicate.
func (a *aaCase) awaitFlowing(what string, within time.Duration) {
	a.t.Helper()
	start := time.Now()
	for _, cl := range aaClusters {
		from := a.prod[other(cl)]
		if _, err := a.tail[cl].awaitPast(from.gen, from.Mark(), within); err != nil {
			a.t.Fatalf("%s: %s's records do not reach %s: %v", what, other(cl), cl, err)
		}
	}
	a.t.Logf("%s: both flows replicate (%.1f s)", what, time.Since(start).Seconds())
}

// excludeLost removes from what is required anywhere the records cluster's producer had acknowledged that
// cluster no longer holds (a broker killed with -9 may lose what it acknowledged; no mirror can copy what its
// source no longer has). It returns how many.
func (a *aaCase) excludeLost(cl string) int {
	a.t.Helper()
	recs, err := a.tail[cl].snapshot(2 * time.Minute)
	if err != nil {
		a.t.Fatalf("read %s on %s: %v", a.topic, cl, err)
	}
	sp := a.prod[cl]
	exp := sp.expected()
	total := 0
	for p, offsets := range exp.offsets {
		has := map[int]bool{}
		for _, r := range recs[p] {
			if r.parsed && r.gen == sp.gen {
				has[r.seq] = true
			}
		}
		var lost []int
		for seq := range offsets {
			if exp.required(p, seq) && !has[seq] {
				lost = append(lost, seq)
			}
		}
		if len(lost) > 0 {
			sp.goneFromA(p, lost)
			total += len(lost)
			a.t.Logf("lost by broker %s itself (acknowledged, then gone after its kill -9): partition %d sequences %s", cl, p, ranges(lost, 8))
		}
	}
	return total
}

// auditBoth waits until each cluster holds every record both producers require, and audits each against both;
// thrice counts the records a cluster holds three times or more, back those of a cluster's own producer it holds
// more than once (copied back to where they were produced: a loop).
func (a *aaCase) auditBoth(within time.Duration) (res map[string]*auditResult, thrice, back map[string]int, caughtUp map[string]string) {
	a.t.Helper()
	res, thrice, back, caughtUp = map[string]*auditResult{}, map[string]int{}, map[string]int{}, map[string]string{}
	exps := []*expected{a.prod["A"].expected(), a.prod["B"].expected()}
	for _, cl := range aaClusters {
		took, err := a.tail[cl].awaitCaughtUp(within, exps...)
		caughtUp[cl] = fmt.Sprintf("in %.1f s", took.Seconds())
		if err != nil {
			a.t.Errorf("%s: %v", cl, err)
			caughtUp[cl] = "never"
		}
	}
	for _, cl := range aaClusters {
		recs, err := a.tail[cl].snapshot(2 * time.Minute)
		if err != nil {
			a.t.Fatalf("read %s on %s: %v", a.topic, cl, err)
		}
		res[cl] = audit(cl+":"+a.topic, recs, exps...)
		a.t.Logf("audit of %s on %s (generation 1 was produced on A, 2 on B):\n%s", a.topic, cl, res[cl])
		for p, rs := range recs {
			copies := map[[2]int]int{}
			writers := map[[2]int][]int64{}
			for _, r := range rs {
				if r.parsed {
					k := [2]int{r.gen, r.seq}
					copies[k]++
					writers[k] = append(writers[k], r.producerID)
				}
			}
			for k, n := range copies {
				if n >= 3 {
					thrice[cl]++
					if thrice[cl] <= 5 {
						// Who wrote each copy tells re-sends of one flow (its producers, one after the other)
						// from a record that went round (a copy of a cluster's own generation).
						a.t.Logf("%s partition %d: generation %d (produced on %s) sequence %d %d times, written by producer ids %v", cl, p, k[0], originOf(k[0]), k[1], n, writers[k])
					}
				}
				if n > 1 && originOf(k[0]) == cl {
					back[cl]++
				}
			}
		}
	}
	return res, thrice, back, caughtUp
}

// countsGrow returns, per cluster, how many records the topic gained over d: with the producers stopped and
// both clusters caught up, any is a record going round.
func (a *aaCase) countsGrow(d time.Duration) map[string]int64 {
	a.t.Helper()
	before := map[string]int64{}
	for _, cl := range aaClusters {
		before[cl] = kafkatest.EndOffsets(a.t, cl, a.topic, sourcePartitions)
	}
	waitFor(a.t.Context(), d)
	out := map[string]int64{}
	for _, cl := range aaClusters {
		out[cl] = kafkatest.EndOffsets(a.t, cl, a.topic, sourcePartitions) - before[cl]
	}
	return out
}

// logMapSize logs how many offset-map ranges each flow keeps for the topic: each switch between the two origins
// in a partition is a gap for both flows' maps.
func (a *aaCase) logMapSize() {
	a.t.Helper()
	var lines []string
	err := a.c.query(a.t.Context(), "SELECT source_alias, count(*), count(DISTINCT partition) FROM offset_ranges WHERE topic = $1 GROUP BY 1 ORDER BY 1",
		[]any{a.topic}, func(rows pgx.Rows) error {
			var alias string
			var n, parts int64
			if err := rows.Scan(&alias, &n, &parts); err != nil {
				return err
			}
			lines = append(lines, fmt.Sprintf("%s→%s %d ranges over %d partitions", alias, other(alias), n, parts))
			return nil
		})
	if err != nil {
		a.t.Logf("offset map size: %v", err)
		return
	}
	a.t.Logf("offset map: %s", strings.Join(lines, "; "))
}
