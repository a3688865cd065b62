package chaos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"testing"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/failover"
)

// TestFailback fails over from A to B as TestFailoverPlanned does, lets B take writes on a topic of its own
// (which already held records before the failover), moves the consumer group on B on inside A's copy
// (A.orders), and fails back with POST /connectors/{ba}/failback on a B→A connector created STOPPED.
// Expected: A gets exactly the records produced on B after the failover (none of those B held before, none
// twice, in order), and the group resumes on A at exactly its position on B: the record there is the record
// it was at on B.
func TestFailback(t *testing.T) {
	v := vol()
	fc := newFailoverCase(t, "fob")
	s := fc.s
	local := kafkatest.TopicName(t, "fobB")
	createTopic(t, "B", local, sourcePartitions)
	produceOn(t, "B", local, "before", 20) // on B before the failover: never copied to A
	s.prod.Run(v.rate)
	s.awaitFlowing(time.Minute)
	fc.consumeOnA(v.settle)
	moved := fc.failover(60_000, v.deadline)
	s.prod.Stop()
	atFailover := map[int32]int64{} // where the failover put the group on B
	for _, g := range moved.Groups {
		for _, gp := range g.Partitions {
			if gp.TargetOffset != nil {
				atFailover[gp.Partition] = *gp.TargetOffset
			}
		}
	}

	// On B: producers write to its own topic; the group reads A's copy on B to some point and commits there.
	produceOn(t, "B", local, "after", 30)
	admin := newAdmin(t, "B")
	var commit []kafka.GroupOffset
	positions := make([]int64, sourcePartitions)
	for p := range sourcePartitions {
		recs := kafkatest.ReadAll(t, "B", s.remote, int32(p))
		// Inside the copy, half way from where the failover put the group to its end: the group read on.
		from := atFailover[int32(p)]
		positions[p] = from + (recs[len(recs)-1].Offset+1-from)/2
		commit = append(commit, kafka.GroupOffset{Topic: s.remote, Partition: int32(p), Offset: positions[p]})
	}
	if err := admin.AlterGroupOffsets(t.Context(), fc.group, commit); err != nil {
		t.Fatalf("commit group %s on B: %v", fc.group, err)
	}

	ba, ckBA := createBack(t, s, regexp.QuoteMeta(local), regexp.QuoteMeta(s.remote)+"|"+regexp.QuoteMeta(local), fc.group, nil)
	awaitFollowed(t, s.c, ckBA, fc.group, v.deadline)
	rep := awaitOperation(t, s.c, ba, "failback", map[string]any{"failover_of": s.name, "checkpoint_connector": ckBA, "drain_timeout_ms": 60_000}, v.deadline)

	// A holds exactly what B's producers wrote after the failover.
	copied, twice, before := 0, 0, 0
	for p := range sourcePartitions {
		seen := map[string]bool{}
		for _, r := range kafkatest.ReadAll(t, "A", "B."+local, int32(p)) {
			v := string(r.Value)
			switch {
			case seen[v]:
				twice++
			case len(v) >= 6 && v[:6] == "before":
				before++
			}
			seen[v] = true
			copied++
		}
	}
	// The group resumes on A at the record it was at on B.
	onA := groupOn(t, "A", fc.group, s.topic)
	wrong := 0
	for p := range sourcePartitions {
		atB := valueAt(t, "B", s.remote, int32(p), positions[p])
		atA := valueAt(t, "A", s.topic, int32(p), onA[int32(p)])
		if atB == "" || atA != atB {
			wrong++
			t.Errorf("partition %d: the group is at %d on B (%q) and resumes at %d on A (%q)", p, positions[p], atB, onA[int32(p)], atA)
		}
	}
	exact := exactCommitted(rep)
	t.Logf("SUMMARY %s: started from %v; on A's B.%s: %d records (produced on B after the failover: %d), %d of those B held before, %d twice; "+
		"group resumes on A at the record it was at on B in %d of %d partitions (wrong %d); exact and committed partitions in the report %d",
		t.Name(), rep.StartedFrom, local, copied, 30*sourcePartitions, before, twice, sourcePartitions-wrong, sourcePartitions, wrong, exact)
	if copied != 30*sourcePartitions || before > 0 || twice > 0 {
		t.Errorf("A's copy of B's topic: %d records, want %d; %d from before the failover, %d twice", copied, 30*sourcePartitions, before, twice)
	}
}

// createBack creates the B→A source connector of the scenario, STOPPED, for the topics on B, and its checkpoint
// connector following group in ckTopics, both with extra's settings; it returns their names.
func createBack(t *testing.T, s *scenario, topics, ckTopics, group string, extra map[string]string) (ba, ckBA string) {
	t.Helper()
	ba, ckBA = "ba-"+s.name, "ckba-"+s.name
	s.c.must(http.MethodPost, "/connectors", map[string]any{"name": ba, "initial_state": "STOPPED", "config": withSettings(extra, map[string]string{
		"connector.class":                       "org.apache.kafka.connect.mirror.MirrorSourceConnector",
		"source.cluster.alias":                  "B",
		"target.cluster.alias":                  "A",
		"source.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "B"),
		"target.cluster.bootstrap.servers":      kafkatest.Bootstrap(t, "A"),
		"topics":                                topics,
		"tasks.max":                             "2",
		"replication.factor":                    "1",
		"offset-syncs.topic.replication.factor": "1",
		"sync.topic.acls.enabled":               "false",
		"refresh.topics.interval.seconds":       "1",
	})}, http.StatusCreated)
	s.c.putConfig(ckBA, withSettings(extra, map[string]string{
		"connector.class":                      "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":                 "B",
		"target.cluster.alias":                 "A",
		"source.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "B"),
		"target.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "A"),
		"groups":                               regexp.QuoteMeta(group),
		"topics":                               ckTopics,
		"emit.checkpoints.interval.seconds":    "1",
		"refresh.groups.interval.seconds":      "1",
		"checkpoints.topic.replication.factor": "1",
	}))
	return ba, ckBA
}

// groupOn reads group's committed offsets of topic on cluster, by partition.
func groupOn(t *testing.T, cluster, group, topic string) map[int32]int64 {
	t.Helper()
	have, failed, err := newAdmin(t, cluster).GroupOffsets(t.Context(), []string{group})
	if err != nil || failed[group] != nil {
		t.Fatalf("read group %s on %s: %v %v", group, cluster, err, failed[group])
	}
	out := map[int32]int64{}
	for _, o := range have[group] {
		if o.Topic == topic {
			out[o.Partition] = o.Offset
		}
	}
	return out
}

// exactCommitted counts the group partitions a report calls exact and committed.
func exactCommitted(rep *failover.Report) int {
	n := 0
	for _, g := range rep.Groups {
		for _, gp := range g.Partitions {
			if gp.Exact && gp.Committed {
				n++
			}
		}
	}
	return n
}

// produceOn writes n records to every partition of topic on cluster, their values prefixed with what.
func produceOn(t *testing.T, cluster, topic, what string, n int) {
	t.Helper()
	var recs []kafkatest.Record
	for p := range sourcePartitions {
		for i := range n {
			recs = append(recs, kafkatest.Record{Topic: topic, Partition: int32(p), Value: fmt.Appendf(nil, "%s p=%d i=%d", what, p, i)})
		}
	}
	kafkatest.Produce(t, cluster, recs)
}

// valueAt returns the value of the record at offset in the partition, "" when there is none.
func valueAt(t *testing.T, cluster, topic string, partition int32, offset int64) string {
	t.Helper()
	for _, r := range kafkatest.ReadAll(t, cluster, topic, partition) {
		if r.Offset == offset {
			return string(r.Value)
		}
	}
	return ""
}

// awaitFollowed waits until the checkpoint connector follows the group.
func awaitFollowed(t *testing.T, c *cluster, ck, group string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		code, body, err := c.do(http.MethodGet, "/connectors/"+ck+"/groups/"+group+"/offsets", nil)
		if err == nil && code == http.StatusOK {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the checkpoint connector %s never followed group %s: %d %s %v", ck, group, code, body, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitOperation files a failover or failback (kind) of connector with body and polls it until it ends; it
// returns the report.
func awaitOperation(t *testing.T, c *cluster, connector, kind string, body map[string]any, within time.Duration) *failover.Report {
	t.Helper()
	began := time.Now()
	c.must(http.MethodPost, "/connectors/"+connector+"/"+kind, body, http.StatusAccepted)
	for {
		raw := c.must(http.MethodGet, "/connectors/"+connector+"/"+kind, nil, http.StatusOK)
		var st failoverState
		if err := json.Unmarshal(raw, &st); err != nil {
			t.Fatalf("GET %s: %s: %v", kind, raw, err)
		}
		if st.State == "succeeded" || st.State == "failed" {
			t.Logf("%s %s after %.1f s: %s", kind, st.State, time.Since(began).Seconds(), raw)
			if st.State == "failed" || st.Report == nil {
				t.Fatalf("%s failed: %s", kind, raw)
			}
			return st.Report
		}
		if time.Since(began) > within {
			t.Fatalf("%s not done within %s: %s", kind, within, raw)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
