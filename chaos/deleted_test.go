package chaos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// The notice kinds connectors/source/notices.go defines for records a deleted source topic took with it.
const (
	kindDataNotReplicated = "data_not_replicated"
	kindTopicDeleted      = "source_topic_deleted"
	kindTopicRecreated    = "source_topic_recreated"
)

// deletedVolume is how many records per partition a deletion case writes before it starts the connector, and
// the producer's batch size: the connector's small fetches return one batch each, so the batches must be small
// for it to stay behind, and large enough with -chaos.long for the burst to be written within minutes.
func deletedVolume() (perPartition int, batchBytes string) {
	if *longRun {
		return 30_000, "4000"
	}
	return 6_000, "1200"
}

// newDeletionScenario is newScenario for the deletion cases: the records are written in small batches and the
// connector reads them in small fetches (a fetch returns at least one whole batch), so that it stays behind a
// burst for a while; topics are refreshed every 5 s.
func newDeletionScenario(t *testing.T, prefix string) *scenario {
	s := newScenario(t, prefix)
	_, batchBytes := deletedVolume()
	s.prod = newSeqProducerWith(t, s.topic, sourcePartitions, 1, valueSize, map[string]string{"batch.size": batchBytes, "linger.ms": "0"})
	s.extra = map[string]string{
		"source.consumer.max.partition.fetch.bytes": "1024",
		"source.consumer.fetch.max.bytes":           "1024",
		"refresh.topics.interval.seconds":           "5",
	}
	return s
}

// TestSourceTopicDeletedWhileBehind deletes the source topic while the connector is far behind it (a burst
// written before the connector started, read in small fetches), with topics refreshed every 5 s.
// Expected: what reaches B is in order and without gaps other than the end of each partition the deletion
// took; a data_not_replicated notice per partition names exactly the records missing on B (and none is shown
// for a partition that lost nothing); the plan drops the topic.
func TestSourceTopicDeletedWhileBehind(t *testing.T) {
	s, deletedAt, notices := deleteWhileBehind(t, "delb", -1)
	st := s.c.awaitStatus(s.name, "without tasks", 2*time.Minute, func(st connectorStatus) bool { return len(st.Tasks) == 0 })
	t.Logf("plan dropped the deleted topic %.1f s after the deletion: %s", time.Since(deletedAt).Seconds(), st.states())
	res := s.auditGone(10 * time.Second)
	checkDeletionReport(t, res, notices.close(), deletedAt, sourcePartitions)
}

// TestSourceTopicDeletedWhileBehindDefaultRefresh is TestSourceTopicDeletedWhileBehind with MM2's default topic
// refresh interval (600 s): the plan keeps the deleted topic for minutes. It runs with -chaos.long only.
// Expected: each task drains its partition, shows it deleted in the partitions endpoint, and its own notice names
// exactly the records missing on B, within seconds of the deletion.
func TestSourceTopicDeletedWhileBehindDefaultRefresh(t *testing.T) {
	if !*longRun {
		t.Skip("runs with -chaos.long: the default suite has TestSourceTopicDeletedWhileBehind")
	}
	s := newDeletionScenario(t, "deld")
	delete(s.extra, "refresh.topics.interval.seconds")
	s.refreshDefault = true
	perPartition, _ := deletedVolume()
	s.prod.Burst(perPartition * sourcePartitions)
	s.startConnector()
	mark := make([]int, sourcePartitions)
	for p := range mark {
		mark[p] = perPartition / 10
	}
	if _, err := s.tail.awaitPast(1, mark, 2*time.Minute); err != nil {
		t.Fatalf("replication did not start: %v", err)
	}
	notices := s.watchNotices()
	deletedAt := time.Now()
	s.deleteTopic()
	s.awaitPartitionsDeleted(2 * time.Minute)
	t.Logf("every partition deleted in the partitions endpoint %.1f s after the deletion", time.Since(deletedAt).Seconds())
	res := s.auditGone(10 * time.Second)
	checkDeletionReport(t, res, notices.close(), deletedAt, sourcePartitions)
}

// partitionReport is a partition of GET /connectors/{c}/partitions, as the deletion cases read it.
type partitionReport struct {
	Topic     string `json:"topic"`
	Status    string `json:"status"`
	EndOffset *int64 `json:"end_offset"`
}

// awaitPartitions waits until every partition of the topic in GET /connectors/{c}/partitions satisfies ok.
func (s *scenario) awaitPartitions(what string, within time.Duration, ok func(partitionReport) bool) {
	s.t.Helper()
	deadline := time.Now().Add(within)
	var last string
	for {
		code, body, err := s.c.do(http.MethodGet, "/connectors/"+s.name+"/partitions", nil)
		var out struct {
			ByPartition []partitionReport `json:"by_partition"`
		}
		if err == nil && code == http.StatusOK && json.Unmarshal(body, &out) == nil {
			n := 0
			for _, p := range out.ByPartition {
				if p.Topic == s.topic && ok(p) {
					n++
				}
			}
			if n == sourcePartitions {
				return
			}
			last = string(body)
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("not every partition %s within %s: %s", what, within, last)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// awaitPartitionsDeleted waits until GET /connectors/{c}/partitions shows every partition deleted.
func (s *scenario) awaitPartitionsDeleted(within time.Duration) {
	s.t.Helper()
	s.awaitPartitions("deleted", within, func(p partitionReport) bool { return p.Status == "deleted" })
}

// TestSourceTopicRecreatedSmallerWhileBehind deletes the source topic while the connector is far behind it and
// creates it again at once with half the partitions.
// Expected: every record of the deleted topic missing on B is named by a notice (the partitions the new topic
// still has by their tasks, the others by the connector as its plan drops them), exactly. Like the next two
// cases it runs with -chaos.long only.
func TestSourceTopicRecreatedSmallerWhileBehind(t *testing.T) {
	if !*longRun {
		t.Skip("runs with -chaos.long: the default suite has TestSourceTopicDeletedWhileBehind")
	}
	s, deletedAt, notices := deleteWhileBehind(t, "dels", sourcePartitions/2)
	s.c.awaitStatus(s.name, "with fewer tasks", 2*time.Minute, func(st connectorStatus) bool { return len(st.Tasks) == sourcePartitions/2 })
	res := s.auditGone(10 * time.Second)
	checkDeletionReport(t, res, notices.close(), deletedAt, sourcePartitions)
}

// TestSourceTopicRecreatedSmallerAfterCatchingUp deletes the source topic once the connector has replicated all
// of it and creates it again 2.5 s later with half the partitions.
// Expected: no notice of loss or of a re-creation stays in the status (nothing was lost, and the end offsets
// last seen say so), and none says a task was not running.
func TestSourceTopicRecreatedSmallerAfterCatchingUp(t *testing.T) {
	if !*longRun {
		t.Skip("runs with -chaos.long: the default suite has TestSourceTopicDeletedWhileBehind")
	}
	perPartition, _ := deletedVolume()
	s := newDeletionScenario(t, "delc")
	s.prod.Burst(perPartition * sourcePartitions / 10)
	s.startConnector()
	if _, err := s.tail.awaitCaughtUp(2*time.Minute, s.prod.expected()); err != nil {
		t.Fatalf("catching up: %v", err)
	}
	waitFor(t.Context(), 3*time.Second) // the tasks publish the end offsets they saw
	notices := s.watchNotices()
	s.deleteTopic()
	waitFor(t.Context(), 2500*time.Millisecond)
	s.createTopic(sourcePartitions / 2)
	s.c.awaitStatus(s.name, "with fewer tasks", 2*time.Minute, func(st connectorStatus) bool { return len(st.Tasks) == sourcePartitions/2 })
	waitFor(t.Context(), 12*time.Second) // two identity checks and two plan rounds
	seen := notices.close()
	for _, n := range seen {
		t.Logf("notice seen: %s", n)
	}
	final := s.notices()
	for _, n := range final {
		if n.Kind == kindDataNotReplicated || n.Kind == kindTopicDeleted || n.Kind == kindTopicRecreated {
			t.Errorf("a lossless re-creation left a notice in the status: %s", n)
		}
	}
	for _, n := range seen {
		if strings.Contains(n.Message, "not running") {
			t.Errorf("a notice says a task was not running while it was: %s", n)
		}
	}
	res := s.auditGone(10 * time.Second)
	expectClean(t, res, "missing", "reordered")
}

// TestSourceTopicDeletedWhilePaused pauses the connector while it is far behind, deletes the source topic
// while it is paused, and resumes it.
// Expected: the records missing on B are exactly those the notices name, judged on the end offsets the paused
// tasks last saw seconds before the deletion.
func TestSourceTopicDeletedWhilePaused(t *testing.T) {
	if !*longRun {
		t.Skip("runs with -chaos.long: the default suite has TestSourceTopicDeletedWhileBehind")
	}
	s := startBehind(t, "delp")
	s.c.pause(s.name)
	s.c.awaitStatus(s.name, "PAUSED", time.Minute, func(st connectorStatus) bool { return st.allIn("PAUSED", taskCount) })
	waitFor(t.Context(), 4*time.Second) // the paused tasks look at the end offsets every 3 s
	notices := s.watchNotices()
	deletedAt := time.Now()
	s.deleteTopic()
	waitFor(t.Context(), 5*time.Second)
	s.c.resume(s.name)
	s.c.awaitStatus(s.name, "without tasks", 2*time.Minute, func(st connectorStatus) bool {
		return st.Connector.State == "RUNNING" && len(st.Tasks) == 0
	})
	res := s.auditGone(10 * time.Second)
	checkDeletionReport(t, res, notices.close(), deletedAt, sourcePartitions)
}

// deleteWhileBehind writes a burst, starts a throttled connector, waits until each partition has a tenth of
// its records on B, and deletes the source topic (creating it again with recreate partitions when that is
// positive). It returns the scenario, when the topic was deleted and the notices seen from just before.
func deleteWhileBehind(t *testing.T, prefix string, recreate int) (*scenario, time.Time, *noticeWatcher) {
	s := startBehind(t, prefix)
	s.awaitEndsPublished(time.Minute)
	notices := s.watchNotices()
	onB := s.onB()
	deletedAt := time.Now()
	s.deleteTopic()
	perPartition, _ := deletedVolume()
	t.Logf("records on B when the topic was deleted: %d of %d", onB, perPartition*sourcePartitions)
	if recreate > 0 {
		s.createTopic(recreate)
	}
	t.Logf("source topic deleted (re-created with %d partitions) %.1f s after B had a tenth of each partition", max(recreate, 0),
		time.Since(deletedAt).Seconds())
	return s, deletedAt, notices
}

// startBehind writes a burst, starts a throttled connector and returns once each partition has a tenth of its
// records on B.
func startBehind(t *testing.T, prefix string) *scenario {
	perPartition, _ := deletedVolume()
	s := newDeletionScenario(t, prefix)
	s.prod.Burst(perPartition * sourcePartitions)
	s.startConnector()
	mark := make([]int, sourcePartitions)
	for p := range mark {
		mark[p] = perPartition / 10
	}
	if _, err := s.tail.awaitPast(1, mark, 2*time.Minute); err != nil {
		t.Fatalf("replication did not start: %v", err)
	}
	return s
}

// deleteTopic deletes the scenario's source topic on A and waits until A no longer lists it.
func (s *scenario) deleteTopic() {
	s.t.Helper()
	admin := newAdmin(s.t, "A")
	if err := admin.DeleteTopics(s.t.Context(), []string{s.topic}); err != nil {
		s.t.Fatalf("delete %s: %v", s.topic, err)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		topics, err := admin.Topics(s.t.Context())
		if _, listed := topics[s.topic]; err == nil && !listed {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%s still listed a minute after its deletion (error %v)", s.topic, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// onB counts the records the reader has read from B so far.
func (s *scenario) onB() int {
	s.tail.mu.Lock()
	defer s.tail.mu.Unlock()
	n := 0
	for _, rs := range s.tail.records {
		n += len(rs)
	}
	return n
}

// auditGone audits B once it has stopped growing for quiet: what the deleted topic's partitions will ever have
// there.
func (s *scenario) auditGone(quiet time.Duration) *auditResult {
	s.t.Helper()
	last, stable := -1, time.Now()
	for time.Since(stable) < quiet {
		recs, err := s.tail.snapshot(time.Minute)
		if err != nil {
			s.t.Fatalf("read B: %v", err)
		}
		n := 0
		for _, rs := range recs {
			n += len(rs)
		}
		if n != last {
			last, stable = n, time.Now()
		}
		time.Sleep(time.Second)
	}
	recs, err := s.tail.snapshot(time.Minute)
	if err != nil {
		s.t.Fatalf("read B: %v", err)
	}
	s.prod.flush(time.Minute)
	res := audit(s.remote, recs, s.prod.expected())
	s.audited = true
	s.t.Logf("\n%s", res)
	if st, err := s.c.status(s.name); err == nil {
		s.t.Logf("final status: %s\n%s", st.states(), st.traces())
	}
	return res
}

// inFlightPattern finds the records a notice names as read and in flight when a pipeline restarted: the target
// may have written them although it never confirmed it, so they may be on B.
var inFlightPattern = regexp.MustCompile(`records (\d+) to (\d+) had been read and were in flight`)

// checkDeletionReport compares, partition by partition, the records of the deleted topic missing on B with the
// offsets the notices name, and logs the figures: they must be equal (but for records a notice names as in
// flight at a pipeline restart, which the target may have written unconfirmed), and no notice may name a
// partition that lost nothing. B must hold what it holds in order (duplicates allowed).
func checkDeletionReport(t *testing.T, res *auditResult, seen []seenNotice, deletedAt time.Time, partitions int) {
	t.Helper()
	expectClean(t, res, "reordered") // duplicates are at-least-once: a pipeline restarted under load sends again
	reported := map[int][]int64{}    // partition -> offsets named
	inFlight := map[int][]int64{}    // partition -> offsets named as in flight at a pipeline restart: on B or not
	first := map[int]time.Time{}
	for _, n := range seen {
		t.Logf("notice seen %.1f s after the deletion: %s", n.at.Sub(deletedAt).Seconds(), n)
		if n.Partition == nil {
			continue
		}
		p := int(*n.Partition)
		if m := inFlightPattern.FindStringSubmatch(n.Message); m != nil {
			from, _ := strconv.ParseInt(m[1], 10, 64)
			to, _ := strconv.ParseInt(m[2], 10, 64)
			for off := from; off <= to; off++ {
				inFlight[p] = append(inFlight[p], off)
			}
		}
		switch {
		case n.Kind == kindDataNotReplicated && n.FirstOffset != nil && n.LastOffset != nil:
			for off := *n.FirstOffset; off <= *n.LastOffset; off++ {
				if !slices.Contains(reported[p], off) {
					reported[p] = append(reported[p], off)
				}
			}
		case n.Kind == kindTopicDeleted || n.Kind == kindTopicRecreated:
			t.Errorf("partition %d: a notice says what was lost cannot be known although the end offsets were seen: %s", p, n.Message)
		default:
			continue
		}
		if _, ok := first[p]; !ok {
			first[p] = n.at
		}
	}
	var lostAll, reportedAll int
	var rows []string
	for _, r := range res.Rows {
		if r.Gen != 1 {
			continue
		}
		named := reported[r.Partition]
		slices.Sort(named)
		lostAll += r.Missing
		reportedAll += len(named)
		delay := "-"
		if at, ok := first[r.Partition]; ok {
			delay = fmt.Sprintf("%.1f s", at.Sub(deletedAt).Seconds())
		}
		rows = append(rows, fmt.Sprintf("partition %d: lost %d (%s), reported %d (%s), notice after %s",
			r.Partition, r.Missing, ranges(r.missingAt, 4), len(named), ranges(named, 4), delay))
		var silent, wrong []int64
		for _, off := range r.missingAt {
			if !slices.Contains(named, off) {
				silent = append(silent, off)
			}
		}
		for _, off := range named {
			if !slices.Contains(r.missingAt, off) && !slices.Contains(inFlight[r.Partition], off) {
				wrong = append(wrong, off)
			}
		}
		if len(silent)+len(wrong) > 0 {
			t.Errorf("partition %d: the records missing on B (offsets %s) are not the ones the notices name (%s): missing and not named %s, named and on B %s",
				r.Partition, ranges(r.missingAt, 6), ranges(named, 6), ranges(silent, 6), ranges(wrong, 6))
		}
	}
	t.Logf("SUMMARY %s: records of the deleted topic lost %d, reported %d, over %d partitions:\n%s",
		t.Name(), lostAll, reportedAll, partitions, strings.Join(rows, "\n"))
	if lostAll == 0 {
		t.Logf("nothing was lost: the connector caught up before the deletion, so the case did not exercise a loss")
	}
}

// seenNotice is a notice of the connector or a task, as GET /connectors/{c}/notices shows it, and when it was
// first seen.
type seenNotice struct {
	Kind        string `json:"kind"`
	Message     string `json:"message"`
	Topic       string `json:"topic"`
	Partition   *int32 `json:"partition"`
	FirstOffset *int64 `json:"first_offset"`
	LastOffset  *int64 `json:"last_offset"`
	at          time.Time
}

func (n seenNotice) String() string { return n.Kind + ": " + n.Message }

// notices returns the notices the connector and its tasks show now.
func (s *scenario) notices() []seenNotice {
	s.t.Helper()
	all, err := s.fetchNotices()
	if err != nil {
		s.t.Fatalf("%v", err)
	}
	return all
}

func (s *scenario) fetchNotices() ([]seenNotice, error) {
	code, body, err := s.c.do(http.MethodGet, "/connectors/"+s.name+"/notices", nil)
	if err != nil || code != http.StatusOK {
		return nil, fmt.Errorf("GET notices of %s: %d %s %v", s.name, code, body, err)
	}
	var out struct {
		Units []struct {
			Notices []seenNotice `json:"notices"`
		} `json:"units"`
	}
	if err := json.Unmarshal(body, &out); err != nil {
		return nil, fmt.Errorf("GET notices of %s: %w: %s", s.name, err, body)
	}
	var all []seenNotice
	for _, u := range out.Units {
		all = append(all, u.Notices...)
	}
	return all, nil
}

// noticeWatcher collects every distinct notice the connector and its tasks show while it runs: a task's notice
// goes with the task when the plan drops it.
type noticeWatcher struct {
	stop, done chan struct{}
	mu         sync.Mutex
	seen       []seenNotice
}

func (s *scenario) watchNotices() *noticeWatcher {
	nw := &noticeWatcher{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(nw.done)
		tick := time.NewTicker(200 * time.Millisecond)
		defer tick.Stop()
		for {
			if all, err := s.fetchNotices(); err == nil {
				now := time.Now()
				nw.mu.Lock()
				for _, n := range all {
					if !slices.ContainsFunc(nw.seen, func(o seenNotice) bool { return o.Kind == n.Kind && o.Message == n.Message }) {
						n.at = now
						nw.seen = append(nw.seen, n)
					}
				}
				nw.mu.Unlock()
			}
			select {
			case <-nw.stop:
				return
			case <-tick.C:
			}
		}
	}()
	s.t.Cleanup(func() { nw.close() })
	return nw
}

// close stops the watcher and returns what it saw.
func (nw *noticeWatcher) close() []seenNotice {
	select {
	case <-nw.stop:
	default:
		close(nw.stop)
	}
	<-nw.done
	nw.mu.Lock()
	defer nw.mu.Unlock()
	return slices.Clone(nw.seen)
}

// awaitEndsPublished waits until GET /connectors/{c}/partitions shows an end offset for every partition of the
// topic: the case under test is a deletion after the tasks have published what they saw (a deletion before any
// report is said to be of unknown extent, truthfully, and is not this case).
func (s *scenario) awaitEndsPublished(within time.Duration) {
	s.t.Helper()
	s.awaitPartitions("with an end offset published", within, func(p partitionReport) bool {
		return p.EndOffset != nil && *p.EndOffset > 0
	})
}
