package server_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// sourceTxn is one transaction written to a source partition: its records' count and whether it commits.
type sourceTxn struct {
	records int
	commit  bool
}

// sourceLogRecord is a record written to a source partition in a transaction.
type sourceLogRecord struct {
	offset    int64
	value     string
	committed bool
}

// produceTxns writes txns to one partition of topic on A, in order, and returns the records with their offsets.
// Each transaction is followed by its marker (commit or abort), which takes an offset of its own.
func produceTxns(t *testing.T, topic string, partition int32, tag string, txns []sourceTxn) []sourceLogRecord {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(kafkatest.Bootstrap(t, "A")), kgo.RecordPartitioner(kgo.ManualPartitioner()),
		kgo.TransactionalID(fmt.Sprintf("%s-%d-xlate", topic, partition)))
	require.NoError(t, err)
	defer cl.Close()
	ctx := context.Background()
	var out []sourceLogRecord
	n := 0
	for ti, tx := range txns {
		require.NoError(t, cl.BeginTransaction())
		var recs []*kgo.Record
		for range tx.records {
			state := "aborted"
			if tx.commit {
				state = "committed"
			}
			recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: []byte(fmt.Sprintf("p%d-%s-t%d-%s-%d", partition, tag, ti, state, n))})
			n++
		}
		res := cl.ProduceSync(ctx, recs...)
		require.NoError(t, res.FirstErr())
		for _, r := range res {
			out = append(out, sourceLogRecord{offset: r.Record.Offset, value: string(r.Record.Value), committed: tx.commit})
		}
		end := kgo.TryAbort
		if tx.commit {
			end = kgo.TryCommit
		}
		require.NoError(t, cl.EndTransaction(ctx, end))
	}
	return out
}

// TestExactlyOnceTranslatesExactlyAcrossAbortedTransactions replicates, in exactly-once mode, a source topic
// written in transactions of which some were aborted, and translates a consumer group committed at every
// position of the source log: the first record, inside aborted ranges, on commit and abort markers, right after
// them, and at the log end (past a trailing abort marker on one partition, a commit marker on the other, and a
// partition that starts with an aborted transaction). Each translation must be the target offset of the first
// record, read with read_committed on B, that the group had not consumed on A (B's own commit markers make its
// offsets non-contiguous too), and a consumer resuming there must read exactly the committed records from the
// group's position on: none twice, none missing.
func TestExactlyOnceTranslatesExactlyAcrossAbortedTransactions(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", withExactlyOnce)
	alias := uniqueAlias("A")
	topic := kafkatest.TopicName(t, "eosxlate")
	kafkatest.CreateTopic(t, "A", topic, 2, nil)
	layouts := map[int32][]sourceTxn{
		// committed, aborted, committed, two aborted in a row, committed, a trailing aborted one
		0: {{5, true}, {4, false}, {3, true}, {2, false}, {3, false}, {6, true}, {3, false}},
		// starts with an aborted transaction; ends on a commit marker
		1: {{3, false}, {4, true}, {2, false}, {1, true}, {2, true}},
	}
	logs := map[int32][]sourceLogRecord{}
	for p, l := range layouts {
		logs[p] = produceTxns(t, topic, p, "first", l)
	}

	// Transactions of at most 3 records on B (a poll boundary after max.poll.records): B's commit markers fall
	// between records that are contiguous on A, as well as where A's markers were.
	src := mirrorConfig(t, topic, map[string]any{"source.cluster.alias": alias, "tasks.max": "1",
		"exactly.once.support": "required", "source.consumer.isolation.level": "read_committed",
		"source.consumer.max.poll.records": "3"})
	code, body := k.do(http.MethodPut, "/connectors/src-"+alias+"/config", src)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates("src-"+alias, "RUNNING RUNNING", 60*time.Second)
	ck := checkpointConfig(t, alias, "xl-"+alias+"-.*", map[string]any{"topics": topic, "tasks.max": "1"})
	code, body = k.do(http.MethodPut, "/connectors/ck-"+alias+"/config", ck)
	require.Equal(t, http.StatusCreated, code, "%v", body)
	requireExactTranslations(t, k, alias, topic, logs, "records written before the connector started")

	// A restart, transactions written while kmirror is down and while it runs (a trailing aborted one on
	// partition 1 now, a committed one on partition 0): the map continues and stays exact at every position,
	// including the former log ends, whose groups now have records to read.
	k.stop()
	more := map[int32][]sourceTxn{0: {{2, false}, {4, true}}, 1: {{3, true}, {2, false}}}
	for p, l := range more {
		logs[p] = append(logs[p], produceTxns(t, topic, p, "stopped", l)...)
	}
	k2 := startKmirror(t, k.dbURL, withExactlyOnce)
	k2.awaitStates("src-"+alias, "RUNNING RUNNING", 60*time.Second)
	more = map[int32][]sourceTxn{0: {{1, false}, {3, true}}, 1: {{2, true}, {1, false}}}
	for p, l := range more {
		logs[p] = append(logs[p], produceTxns(t, topic, p, "running", l)...)
	}
	requireExactTranslations(t, k2, alias, topic, logs, "after a restart and more transactions")
}

// requireExactTranslations commits a group on A at every position of topic's partitions (log start to log
// end), one group per position, and requires that the checkpoint connector ck-<alias> translates each one
// exactly: to the offset on B of the first committed record at or after it (read with read_committed), or,
// with nothing left to consume, past B's last record; and that a consumer resuming there reads exactly the
// committed records from the position on.
func requireExactTranslations(t *testing.T, k *kmirror, alias, topic string, logs map[int32][]sourceLogRecord, what string) {
	t.Helper()
	remote := alias + "." + topic
	ends := kafkatest.PartitionEnds(t, "A", topic, 2)
	groupOf := func(p int32, c int64) string { return fmt.Sprintf("xl-%s-p%d-c%d", alias, p, c) }
	type position struct {
		p int32
		c int64
	}
	var all []position
	for p := range int32(2) {
		for c := int64(0); c <= ends[p]; c++ {
			all = append(all, position{p, c})
			commitGroup(t, groupOf(p, c), map[kafkatest.Partition]int64{{Topic: topic, Partition: p}: c})
		}
	}

	// B, read with read_committed, holds every committed record once, in order: where each one is.
	var committed []kafkatest.Record
	for p := range int32(2) {
		for _, r := range logs[p] {
			if r.committed {
				committed = append(committed, kafkatest.Record{Topic: topic, Partition: p, Value: []byte(r.value)})
			}
		}
	}
	requireCommittedCopy(t, remote, committed, what+": every committed source record reaches B once")
	onB := readCommitted(t, remote)
	endsB := kafkatest.PartitionEnds(t, "B", remote, 2)
	at := map[string]int64{} // value -> its offset on B
	for p := range int32(2) {
		var offs []int64
		for _, r := range onB[p] {
			at[string(r.Value())] = r.Offset()
			offs = append(offs, r.Offset())
		}
		t.Logf("%s: partition %d: A holds %d records (%d committed), end %d; B holds them at %v, end %d", what, p, len(logs[p]),
			len(onB[p]), ends[p], offs, endsB[p])
	}

	judge := func(pos position, o groupOffset, ok bool) (problems []string, want int64) {
		// The truth: the first committed source record at or after c, and where it is on B.
		want = -1
		var rest []string
		for _, r := range logs[pos.p] {
			if r.committed && r.offset >= pos.c {
				if want < 0 {
					want = at[r.value]
				}
				rest = append(rest, r.value)
			}
		}
		kind := describePosition(logs[pos.p], pos.c, ends[pos.p])
		if !ok || !o.translated {
			return []string{fmt.Sprintf("p%d c=%d (%s): no translation (%+v)", pos.p, pos.c, kind, o)}, want
		}
		if !o.exact || o.basis != "offset_map" || !o.checkpointed {
			problems = append(problems, fmt.Sprintf("p%d c=%d (%s): translated to %d, exact=%v basis=%s checkpointed=%v", pos.p, pos.c, kind, o.target, o.exact, o.basis, o.checkpointed))
		}
		if want >= 0 && o.target != want {
			problems = append(problems, fmt.Sprintf("p%d c=%d (%s): translated to %d, the first unconsumed record is at %d on B", pos.p, pos.c, kind, o.target, want))
		}
		if last := onB[pos.p][len(onB[pos.p])-1].Offset(); want < 0 && (o.target <= last || o.target > endsB[pos.p]) {
			// Nothing left to consume: anywhere past B's last record up to its end (its trailing commit marker
			// skipped or not) reads nothing twice.
			problems = append(problems, fmt.Sprintf("p%d c=%d (%s): translated to %d, want past B's last record %d and at most B's end %d", pos.p, pos.c, kind, o.target, last, endsB[pos.p]))
		}
		// A consumer resuming on B at the translation reads exactly the records the group had not consumed.
		var resumed []string
		for _, r := range onB[pos.p] {
			if r.Offset() >= o.target {
				resumed = append(resumed, string(r.Value()))
			}
		}
		if missing, dups, reordered := auditSeqs(rest, resumed); missing+dups+reordered > 0 {
			problems = append(problems, fmt.Sprintf("p%d c=%d (%s): resuming at %d on B: %d missing, %d read twice, %d reordered", pos.p, pos.c, kind, o.target, missing, dups, reordered))
		}
		return problems, want
	}

	// Wait until every position is translated exactly (or a deadline), then report what is not.
	got := map[position]groupOffset{}
	var wrong []string
	for deadline := time.Now().Add(90 * time.Second); ; {
		wrong = wrong[:0]
		for _, pos := range all {
			if problems, _ := judge(pos, got[pos], true); len(problems) == 0 {
				continue
			}
			o, ok := k.groupOffsets("ck-"+alias, groupOf(pos.p, pos.c))[kafkatest.Partition{Topic: topic, Partition: pos.p}]
			if ok && o.source == pos.c {
				got[pos] = o
			}
			problems, _ := judge(pos, got[pos], ok && o.source == pos.c)
			wrong = append(wrong, problems...)
		}
		if len(wrong) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	for _, pos := range all {
		_, want := judge(pos, got[pos], true)
		t.Logf("%s: p%d c=%-3d %-38s -> B %d (first unconsumed record at %d; B end %d)", what, pos.p, pos.c,
			describePosition(logs[pos.p], pos.c, ends[pos.p]), got[pos].target, want, endsB[pos.p])
	}
	require.Empty(t, wrong, "%s: translations that are not exact:\n%s", what, strings.Join(wrong, "\n"))
}

// describePosition names what lies at offset c of a transactional source log.
func describePosition(log []sourceLogRecord, c, end int64) string {
	if c == end {
		return "log end"
	}
	for i, r := range log {
		if r.offset == c {
			state := "aborted record"
			if r.committed {
				state = "committed record"
			}
			if i == 0 || log[i-1].offset != c-1 {
				state += ", right after a marker"
			}
			if c == 0 {
				state = "log start, " + state
			}
			return state
		}
	}
	// No record: a marker; which one is told by the record before it.
	for i := len(log) - 1; i >= 0; i-- {
		if log[i].offset < c {
			if log[i].committed {
				return "commit marker"
			}
			return "abort marker"
		}
	}
	return "?"
}

// TestExactlyOnceTranslationAfterTheMapLaggedACrash: in exactly-once mode the offsets topic on B is the truth
// and PostgreSQL's copy, which holds the offset map, may lag it by a few transactions when a worker dies. The
// test makes that lag on a stopped kmirror (PostgreSQL's offset and map rolled back to source offset 4 while B
// holds everything up to 16), restarts it and replicates more. A group committed among the records the map
// never learnt must not translate past them (it re-reads some instead, approximately); elsewhere translation
// stays exact.
func TestExactlyOnceTranslationAfterTheMapLaggedACrash(t *testing.T) {
	t.Parallel()
	k := startKmirror(t, "", withExactlyOnce)
	alias := uniqueAlias("A")
	topic := kafkatest.TopicName(t, "eoslag")
	kafkatest.CreateTopic(t, "A", topic, 1, nil)
	logs := map[int32][]sourceLogRecord{0: produceTxns(t, topic, 0, "first", []sourceTxn{{5, true}, {5, true}, {5, true}})}
	name := "src-" + alias
	code, body := k.do(http.MethodPut, "/connectors/"+name+"/config", mirrorConfig(t, topic, map[string]any{"source.cluster.alias": alias,
		"tasks.max": "1", "exactly.once.support": "required", "source.consumer.isolation.level": "read_committed",
		"source.consumer.max.poll.records": "3"}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	k.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	remote := alias + "." + topic
	var sent []kafkatest.Record
	for _, r := range logs[0] {
		sent = append(sent, kafkatest.Record{Topic: topic, Partition: 0, Value: []byte(r.value)})
	}
	requireCommittedCopy(t, remote, sent, "replicated before the crash")
	require.Eventually(t, func() bool { return storedOffsets(t, k, name)[0] == 16 }, 30*time.Second, 100*time.Millisecond)
	k.stop()

	// PostgreSQL's copy as a crash right after the commit of source offset 4 would have left it.
	conn, err := pgx.Connect(context.Background(), k.dbURL)
	require.NoError(t, err)
	defer conn.Close(context.Background())
	_, err = conn.Exec(context.Background(), `UPDATE source_offsets SET "offset" = '{"offset": 4}' WHERE connector_name = $1`, name)
	require.NoError(t, err)
	_, err = conn.Exec(context.Background(), `DELETE FROM offset_ranges WHERE source_alias = $1 AND source_start > 4`, alias)
	require.NoError(t, err)
	_, err = conn.Exec(context.Background(), `UPDATE offset_ranges SET source_end = 4, source_next = 5 WHERE source_alias = $1 AND source_end > 4`, alias)
	require.NoError(t, err)

	k2 := startKmirror(t, k.dbURL, withExactlyOnce)
	k2.awaitStates(name, "RUNNING RUNNING", 60*time.Second)
	logs[0] = append(logs[0], produceTxns(t, topic, 0, "after", []sourceTxn{{3, true}})...)
	for _, r := range logs[0][15:] {
		sent = append(sent, kafkatest.Record{Topic: topic, Partition: 0, Value: []byte(r.value)})
	}
	requireCommittedCopy(t, remote, sent, "resumed from the offsets topic, nothing twice")
	onB := readCommitted(t, remote)

	code, body = k2.do(http.MethodPut, "/connectors/ck-"+alias+"/config", checkpointConfig(t, alias, "lag-"+alias+"-.*", map[string]any{"topics": topic}))
	require.Equal(t, http.StatusCreated, code, "%v", body)
	p := kafkatest.Partition{Topic: topic, Partition: 0}
	end := kafkatest.PartitionEnds(t, "A", topic, 1)[0]
	for _, c := range []int64{2, 5, 7, 12, 16, 17, 18, 20, end} {
		group := fmt.Sprintf("lag-%s-c%d", alias, c)
		commitGroup(t, group, map[kafkatest.Partition]int64{p: c})
		var o groupOffset
		require.Eventually(t, func() bool {
			o = k2.groupOffsets("ck-"+alias, group)[p]
			return o.source == c && o.translated && o.checkpointed
		}, 90*time.Second, 200*time.Millisecond, "c=%d never translated: %+v", c, o)
		var want, resumed []string
		for _, r := range logs[0] {
			if r.offset >= c {
				want = append(want, r.value)
			}
		}
		for _, r := range onB[0] {
			if r.Offset() >= o.target {
				resumed = append(resumed, string(r.Value()))
			}
		}
		missing, dups, reordered := auditSeqs(want, resumed)
		t.Logf("c=%-2d -> B %d exact=%v basis=%s: %d missing, %d re-read", c, o.target, o.exact, o.basis, missing, dups)
		require.Zero(t, missing+reordered, "c=%d: resuming at %d on B skips records", c, o.target)
		if c <= 4 || c >= 17 {
			require.True(t, o.exact, "c=%d is where the map knows everything", c)
		}
		if o.exact {
			require.Zero(t, dups, "c=%d: an exact translation re-reads nothing", c)
		}
	}
}
