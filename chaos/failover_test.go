package chaos

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/failover"
)

// TestFailoverPlanned fails over with POST /connectors/{c}/failover while the producer still writes to A: the
// consumer group on A has stopped (its last position committed), the operation drains, stops the source
// connector and commits the group's translated offsets on B.
// Expected: every record A acknowledged before the report's end listing is on B or in the report's
// not_replicated ranges, none of the listed ones is on B, nothing is duplicated or reordered; the group
// resumes on B with 0 records skipped and 0 read again.
func TestFailoverPlanned(t *testing.T) {
	v := vol()
	fc := newFailoverCase(t, "fop")
	fc.s.prod.Run(v.rate)
	fc.s.awaitFlowing(time.Minute)
	fc.consumeOnA(v.settle)

	rep := fc.failover(60_000, v.deadline)
	if !rep.SourceReachable || !rep.Drained || !rep.SourceStopped {
		t.Errorf("planned failover: source_reachable %v, drained %v, source_stopped %v; want all true", rep.SourceReachable, rep.Drained, rep.SourceStopped)
	}
	fc.s.prod.Stop()
	fc.check(rep, nil)
}

// TestFailoverSourceKilled kills -9 broker A while records flow, once the consumer group's last position on A
// was read by the checkpoint connector, and fails over: the operation does not wait for A, stops the source
// connector, and moves the group from the checkpoint connector's last read.
// Expected: every record A acknowledged is on B, or in the report's not_replicated ranges, or past the end the
// source connector last saw (acknowledged by A but never seen by kmirror before A died: no mirror can know of
// them, the figure is logged); nothing listed is on B; the group resumes on B with 0 skipped and 0 read again.
func TestFailoverSourceKilled(t *testing.T) {
	v := vol()
	fc := newFailoverCase(t, "fok")
	fc.s.prod.Run(v.rate)
	fc.s.awaitFlowing(time.Minute)
	final := fc.consumeOnA(v.settle)
	fc.s.awaitExactTranslation(fc.ck, fc.group, func(p int) int64 { return final[p] }, v.deadline)

	killedAt, mark := time.Now(), fc.s.prod.Mark()
	suite.harness.killKafka(t, "A")
	started := false
	t.Cleanup(func() {
		if !started {
			suite.harness.startKafka(t, "A")
		}
	})
	rep := fc.failover(5_000, v.deadline+time.Minute)
	t.Logf("failover with A down took %.1f s after the kill", time.Since(killedAt).Seconds())
	if rep.SourceReachable || !rep.SourceStopped {
		t.Errorf("failover with A killed: source_reachable %v, source_stopped %v; want false, true", rep.SourceReachable, rep.SourceStopped)
	}
	suite.harness.startKafka(t, "A")
	started = true
	lost := fc.s.excludeLostByA()
	t.Logf("lost by broker A itself (acknowledged, then gone after its kill -9): %d", lost)
	fc.check(rep, mark)
}

// failoverCase is a scenario with a checkpoint connector following one consumer group of the topic.
type failoverCase struct {
	t     *testing.T
	s     *scenario
	ck    string
	group string
	// positions are the group's committed offsets on A when it stopped there, per partition.
	positions []int64
}

func newFailoverCase(t *testing.T, prefix string) *failoverCase {
	return newFailoverCaseWith(t, prefix, nil)
}

// newFailoverCaseWith is newFailoverCase with settings both connectors take (a replication policy).
func newFailoverCaseWith(t *testing.T, prefix string, extra map[string]string) *failoverCase {
	s := newScenario(t, prefix)
	s.extra = extra
	if extra[mirrorconfig.ReplicationPolicyClassConfig] == identityPolicy {
		s.remote = s.topic
	}
	s.startConnector()
	fc := &failoverCase{t: t, s: s, ck: "ck-" + s.name, group: "grp-" + s.topic}
	s.c.putConfig(fc.ck, withSettings(extra, map[string]string{
		"connector.class":                      "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":                 "A",
		"target.cluster.alias":                 "B",
		"source.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "A"),
		"target.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "B"),
		"groups":                               regexp.QuoteMeta(fc.group),
		"topics":                               regexp.QuoteMeta(s.topic),
		"emit.checkpoints.interval.seconds":    "1",
		"refresh.groups.interval.seconds":      "1",
		"checkpoints.topic.replication.factor": "1",
	}))
	return fc
}

// withSettings returns cfg with extra's settings added.
func withSettings(extra, cfg map[string]string) map[string]string {
	maps.Copy(cfg, extra)
	return cfg
}

// consumeOnA plays a consumer group that keeps up with A for d: it commits A's end offsets as the group's
// position every 200 ms (it has read everything up to them), then stops with a last commit, as a consumer
// shut down before a planned failover. It returns the last committed positions.
func (fc *failoverCase) consumeOnA(d time.Duration) []int64 {
	t := fc.t
	admin := newAdmin(t, "A")
	parts := make([]kafka.PartitionID, sourcePartitions)
	for p := range parts {
		parts[p] = kafka.PartitionID{Topic: fc.s.topic, Partition: int32(p)}
	}
	commit := func(ctx context.Context) ([]int64, error) {
		ends, _, err := admin.LogOffsets(ctx, parts, false, false)
		if err != nil {
			return nil, err
		}
		pos := make([]int64, sourcePartitions)
		var offs []kafka.GroupOffset
		for p, id := range parts {
			pos[p] = ends[id].End
			offs = append(offs, kafka.GroupOffset{Topic: id.Topic, Partition: id.Partition, Offset: pos[p]})
		}
		return pos, admin.AlterGroupOffsets(ctx, fc.group, offs)
	}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for ctx.Err() == nil {
			_, _ = commit(ctx) // a failed commit is retried at the next tick, as a consumer would
			select {
			case <-ctx.Done():
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	wg.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pos, err := commit(t.Context())
		if err == nil {
			fc.positions = pos
			t.Logf("consumer group %s stopped on A at %v", fc.group, pos)
			return pos
		}
		if time.Now().After(deadline) {
			t.Fatalf("last commit of group %s on A: %v", fc.group, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// failoverState is GET /connectors/{c}/failover.
type failoverState struct {
	ID     int64            `json:"id"`
	State  string           `json:"state"`
	Phase  *string          `json:"phase"`
	Error  *string          `json:"error"`
	Report *failover.Report `json:"report"`
}

// failover waits until the checkpoint connector follows the group, files the failover, and polls it until it
// ends; it returns the report.
func (fc *failoverCase) failover(drainMs int64, within time.Duration) *failover.Report {
	t, c := fc.t, fc.s.c
	deadline := time.Now().Add(within)
	for {
		code, body, err := c.do(http.MethodGet, "/connectors/"+fc.ck+"/groups/"+fc.group+"/offsets", nil)
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the checkpoint connector never followed group %s: %d %s %v", fc.group, code, body, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
	began := time.Now()
	body := c.must(http.MethodPost, "/connectors/"+fc.s.name+"/failover",
		map[string]any{"checkpoint_connector": fc.ck, "drain_timeout_ms": drainMs}, http.StatusAccepted)
	var st failoverState
	if err := json.Unmarshal(body, &st); err != nil || st.State != "pending" {
		t.Fatalf("POST failover: %s (%v)", body, err)
	}
	c.must(http.MethodPost, "/connectors/"+fc.s.name+"/failover", map[string]any{}, http.StatusConflict)
	for {
		body := c.must(http.MethodGet, "/connectors/"+fc.s.name+"/failover", nil, http.StatusOK)
		st = failoverState{}
		if err := json.Unmarshal(body, &st); err != nil {
			t.Fatalf("GET failover: %s: %v", body, err)
		}
		if st.State == "succeeded" || st.State == "failed" {
			t.Logf("failover %s after %.1f s: %s", st.State, time.Since(began).Seconds(), body)
			if st.State == "failed" || st.Report == nil {
				t.Fatalf("failover failed: %s", body)
			}
			return st.Report
		}
		if time.Now().After(deadline) {
			t.Fatalf("failover not done within %s: %s", within, body)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// check audits B against what A acknowledged and the report, and the group's resume on B. A record A
// acknowledged and B lacks must be in its partition's not_replicated range. With the source killed (killMark:
// the producer's next sequence per partition at the kill) it may instead lie past the end the report knows:
// produced before the kill, acknowledged by A and never seen by kmirror (no mirror can know of those), or
// produced after it (acknowledged once A was back, after the failover); each is counted apart.
func (fc *failoverCase) check(rep *failover.Report, killMark []int) {
	killed := killMark != nil
	t, s := fc.t, fc.s
	exp := s.prod.expected()
	recs, err := s.tail.snapshot(2 * time.Minute)
	if err != nil {
		t.Fatalf("read B: %v", err)
	}
	res := audit(s.remote, recs, exp)
	s.audited = true
	t.Logf("\n%s", res)

	byPart := map[int]failover.PartitionReport{}
	for _, p := range rep.Partitions {
		if p.SourceTopic == s.topic {
			byPart[int(p.Partition)] = p
		}
	}
	var listedMissing, listedOnB, unseen, unaccounted, afterListing int
	for _, row := range res.Rows {
		p := byPart[row.Partition]
		seqAt := map[int64]int{}
		for seq, off := range exp.offsets[row.Partition] {
			seqAt[off] = seq
		}
		missing := map[int64]bool{}
		for _, off := range row.missingAt {
			missing[off] = true
			switch {
			case p.NotReplicated != nil && off >= p.NotReplicated.From && off <= p.NotReplicated.To:
				listedMissing++
			case (p.SourceEnd == nil || off >= *p.SourceEnd) && killed && seqAt[off] < killMark[row.Partition]:
				unseen++ // acknowledged by A, produced before its kill, past what kmirror saw of A
			case p.SourceEnd != nil && off >= *p.SourceEnd:
				afterListing++ // produced after the report listed A's ends (or after A's kill)
			default:
				unaccounted++
				if unaccounted <= 10 {
					t.Errorf("partition %d: record at offset %d on A is neither on B nor in the report (replicated_to %d, not_replicated %+v)",
						row.Partition, off, p.ReplicatedTo, p.NotReplicated)
				}
			}
		}
		if p.NotReplicated != nil {
			for _, off := range exp.offsets[row.Partition] {
				if off >= p.NotReplicated.From && off <= p.NotReplicated.To && !missing[off] {
					listedOnB++
				}
			}
		}
	}
	t.Logf("SUMMARY %s: acknowledged by A %d (produced before the failover or A's kill: %d); missing on B %d: in the report's ranges %d, past the end kmirror last saw %d, "+
		"produced after the report's listing (or A's kill) %d, unaccounted %d; listed but on B %d; report not_replicated_offsets %d; duplicated %d, reordered %d",
		t.Name(), exp.ackedTotal(), before(exp, killMark, rep), res.Missing, listedMissing, unseen, afterListing, unaccounted, listedOnB, rep.NotReplicatedOffsets, res.Duplicated, res.Reordered)
	if unaccounted > 0 || listedOnB > 0 {
		t.Errorf("the report is not exact: %d records neither on B nor listed, %d listed records on B", unaccounted, listedOnB)
	}
	expectClean(t, res, "duplicated", "reordered", "stale")
	fc.checkResume(rep, exp)
}

// checkResume reads the group's committed offsets on B and B's records, and counts what a consumer resuming
// there skips (records after its position on A that lie before its offset on B) and reads again (records
// before its position on A that lie at or after its offset on B).
func (fc *failoverCase) checkResume(rep *failover.Report, exp *expected) {
	t, s := fc.t, fc.s
	var gr *failover.GroupReport
	for i := range rep.Groups {
		if rep.Groups[i].Group == fc.group {
			gr = &rep.Groups[i]
		}
	}
	if gr == nil || gr.Action != failover.ActionCommitted {
		t.Fatalf("group %s: not committed by the failover: %+v", fc.group, gr)
	}
	have, failed, err := newAdmin(t, "B").GroupOffsets(t.Context(), []string{fc.group})
	if err != nil || failed[fc.group] != nil {
		t.Fatalf("read group %s on B: %v %v", fc.group, err, failed[fc.group])
	}
	onB := map[int]int64{}
	for _, o := range have[fc.group] {
		if o.Topic == s.remote {
			onB[int(o.Partition)] = o.Offset
		}
	}
	skipped, reread, inexact := 0, 0, 0
	for _, gp := range gr.Partitions {
		if !gp.Exact || gp.TargetOffset == nil || onB[int(gp.Partition)] != *gp.TargetOffset {
			inexact++
			t.Errorf("group %s partition %d: report %+v, committed on B %d", fc.group, gp.Partition, gp, onB[int(gp.Partition)])
		}
		if gp.SourceOffset != fc.positions[gp.Partition] {
			t.Errorf("group %s partition %d: the report has it at %d on A, it stopped at %d", fc.group, gp.Partition, gp.SourceOffset, fc.positions[gp.Partition])
		}
	}
	for p := range sourcePartitions {
		at, pos := onB[p], fc.positions[p]
		for _, r := range kafkatest.ReadAll(t, "B", s.remote, int32(p)) {
			_, seq, ok := parseValue(r.Value)
			if !ok || seq >= len(exp.offsets[p]) {
				continue
			}
			offA := exp.offsets[p][seq]
			switch {
			case r.Offset < at && offA >= pos:
				skipped++
			case r.Offset >= at && offA >= 0 && offA < pos:
				reread++
			}
		}
	}
	t.Logf("SUMMARY %s: group %s resumes on B at %v (stopped on A at %v): skipped %d, read again %d, inexact partitions %d",
		t.Name(), fc.group, onB, fc.positions, skipped, reread, inexact)
	if skipped+reread > 0 {
		t.Errorf("group %s: %d records skipped, %d read again on B", fc.group, skipped, reread)
	}
}

// before counts the records A acknowledged that were produced before killMark (A's kill) or, without one, below
// the report's source_end (before its end listing).
func before(exp *expected, killMark []int, rep *failover.Report) int {
	n := 0
	for p, offs := range exp.offsets {
		var end int64 = -1
		for _, pr := range rep.Partitions {
			if int(pr.Partition) == p && pr.SourceEnd != nil {
				end = *pr.SourceEnd
			}
		}
		for seq, off := range offs {
			if off >= 0 && (killMark != nil && seq < killMark[p] || killMark == nil && off < end) {
				n++
			}
		}
	}
	return n
}
