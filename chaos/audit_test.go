package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"testing"
	"text/tabwriter"
)

// auditRow is the audit of one partition of one generation of the source topic.
type auditRow struct {
	Partition, Gen int
	Acked          int // acknowledged on A and still required (excluded ones not counted)
	Excluded       int // acknowledged on A, then deleted there before they could be read or lost by A: not required on B
	OnB            int // records of this partition and generation on B, duplicates included
	Missing        int // required sequences absent from B
	Duplicated     int // copies beyond the first of a sequence
	Reordered      int // first occurrences below the highest distinct sequence before them
	Stale          int // records written by a producer id that had already been superseded in the partition
	Unrequired     int // distinct sequences on B that A never acknowledged (failed deliveries): allowed
	AbortedOnA     int // records A holds in aborted transactions of a transactional source producer
	AbortedOnB     int // of those, copies on B: a read_committed reader of B must see none
	Producers      []int64
	MissingSeqs    string  // ranges, for the report
	MissingOnA     string  // the offsets on A of the missing sequences, as A acknowledged them: where to look
	missingAt      []int64 // the same, each one
	FirstOnB       string  // the partition's first record as read on B ("offset 0 gen 1 seq 1"): a reader that
	// skipped the log's start shows here, apart from a mirror that never wrote it
}

// staleGroup is the stale writes of one superseded producer (id and epoch) in one partition.
type staleGroup struct {
	Partition  int
	ProducerID int64
	Epoch      int16
	Offsets    []int64 // on B
}

// writer is who wrote a record batch: the producer id and its epoch. A transactional.id keeps its producer
// id across owners, and each owner's InitTransactions bumps the epoch: under exactly-once, the epoch tells
// the owners apart.
type writer struct {
	id    int64
	epoch int16
}

func (w writer) String() string {
	if w.epoch == 0 {
		return fmt.Sprint(w.id)
	}
	return fmt.Sprintf("%d.%d", w.id, w.epoch)
}

// auditResult is the audit of one remote topic.
type auditResult struct {
	Topic                                 string
	Rows                                  []auditRow
	Missing, Duplicated, Reordered, Stale int
	AbortedOnA, AbortedOnB                int // records of aborted source transactions: on A, and copied to B
	Unparsed, Unexpected                  int // records that are not the sequenced producer's, or of a generation not audited
	StaleWrites                           []staleGroup
	Runs                                  []string // per partition: the writer runs in log order
	Order                                 []string // per partition: the sequences in log order, as ranges
}

// audit checks every record of the remote topic against what A acknowledged for each generation.
//
// Stale writes: in a partition's log, writers (producer id and epoch) must form runs that never come back.
// Once a record of producer P2 follows P1's, P1 has been superseded (its task moved or restarted), and any
// later record of P1 is a write by a producer that should no longer write: a zombie's. Likewise a record of a
// producer id with an epoch below one already seen for it (a fenced owner of the same transactional.id).
func audit(topic string, recs [][]remoteRecord, exps ...*expected) *auditResult {
	res := &auditResult{Topic: topic}
	byGen := map[int]*expected{}
	ofAborted := map[int]int{} // the generation of a transactional producer's aborted records -> its own
	for _, e := range exps {
		byGen[e.gen] = e
		if e.abortedGen != 0 {
			ofAborted[e.abortedGen] = e.gen
		}
	}
	for p, rs := range recs {
		rows := map[int]*auditRow{}
		counts := map[int]map[int]int{} // gen -> seq -> copies
		maxSeq := map[int]int{}
		for _, e := range exps {
			rows[e.gen] = &auditRow{Partition: p, Gen: e.gen}
			counts[e.gen] = map[int]int{}
			maxSeq[e.gen] = -1
		}
		cur := writer{id: -1}
		retired := map[writer]bool{}
		maxEpoch := map[int64]int16{}
		stale := map[writer]*staleGroup{}
		var runs []string
		runLen := 0
		for _, r := range rs {
			// writer runs, over every record of the partition
			isStale := false
			if w := (writer{r.producerID, r.epoch}); w.id >= 0 {
				e, seen := maxEpoch[w.id]
				switch {
				case w == cur:
				case retired[w] || (seen && w.epoch < e):
					isStale = true
				default:
					if cur.id >= 0 {
						retired[cur] = true
						runs = append(runs, fmt.Sprintf("%s×%d", cur, runLen))
					}
					cur, runLen = w, 0
					maxEpoch[w.id] = max(e, w.epoch)
				}
				if isStale {
					g := stale[w]
					if g == nil {
						g = &staleGroup{Partition: p, ProducerID: w.id, Epoch: w.epoch}
						stale[w] = g
					}
					g.Offsets = append(g.Offsets, r.offset)
				} else {
					runLen++
				}
			}
			if !r.parsed {
				res.Unparsed++
				continue
			}
			if gen, ok := ofAborted[r.gen]; ok {
				rows[gen].AbortedOnB++
				continue
			}
			row, e := rows[r.gen], byGen[r.gen]
			if row == nil {
				res.Unexpected++
				continue
			}
			row.OnB++
			if isStale {
				row.Stale++
			}
			if !slices.Contains(row.Producers, r.producerID) {
				row.Producers = append(row.Producers, r.producerID)
			}
			counts[r.gen][r.seq]++
			switch {
			case counts[r.gen][r.seq] > 1:
				row.Duplicated++
			case r.seq < maxSeq[r.gen]:
				row.Reordered++
			}
			maxSeq[r.gen] = max(maxSeq[r.gen], r.seq)
			if counts[r.gen][r.seq] == 1 && (r.seq >= len(e.offsets[p]) || !e.required(p, r.seq)) {
				row.Unrequired++
			}
		}
		if cur.id >= 0 {
			runs = append(runs, fmt.Sprintf("%s×%d", cur, runLen))
		}
		res.Runs = append(res.Runs, strings.Join(runs, " → "))
		res.Order = append(res.Order, seqOrder(rs, 16))
		for _, e := range exps {
			row := rows[e.gen]
			row.Excluded = e.excluded[p]
			if e.abortedOnA != nil {
				row.AbortedOnA = e.abortedOnA[p]
			}
			var missing []int
			var missingAt []int64
			for seq := range e.offsets[p] {
				if e.required(p, seq) {
					row.Acked++
					if counts[e.gen][seq] == 0 {
						missing = append(missing, seq)
						missingAt = append(missingAt, e.offsets[p][seq])
					}
				}
			}
			row.Missing = len(missing)
			row.MissingSeqs = ranges(missing, 6)
			row.MissingOnA = ranges(missingAt, 6)
			row.missingAt = missingAt
			if len(rs) > 0 {
				row.FirstOnB = fmt.Sprintf("offset %d gen %d seq %d", rs[0].offset, rs[0].gen, rs[0].seq)
			}
			res.Missing += row.Missing
			res.Duplicated += row.Duplicated
			res.Reordered += row.Reordered
			res.Stale += row.Stale
			res.AbortedOnA += row.AbortedOnA
			res.AbortedOnB += row.AbortedOnB
			res.Rows = append(res.Rows, *row)
		}
		ws := make([]writer, 0, len(stale))
		for w := range stale {
			ws = append(ws, w)
		}
		slices.SortFunc(ws, func(a, b writer) int { return cmp.Or(cmp.Compare(a.id, b.id), cmp.Compare(a.epoch, b.epoch)) })
		for _, w := range ws {
			res.StaleWrites = append(res.StaleWrites, *stale[w])
		}
	}
	return res
}

// seqOrder renders a partition's log as runs of consecutive sequences: "gen 1 seq 0-54 (pid 5), gen 1 seq
// 53-910 (pid 1003), ...", at most limit runs from the start and limit from the end.
func seqOrder(rs []remoteRecord, limit int) string {
	type run struct {
		gen, first, last int
		w                writer
	}
	var runs []run
	for _, r := range rs {
		if !r.parsed {
			continue
		}
		if n := len(runs); n > 0 {
			last := &runs[n-1]
			if last.gen == r.gen && last.w == (writer{r.producerID, r.epoch}) && r.seq == last.last+1 {
				last.last = r.seq
				continue
			}
		}
		runs = append(runs, run{r.gen, r.seq, r.seq, writer{r.producerID, r.epoch}})
	}
	text := func(r run) string {
		if r.first == r.last {
			return fmt.Sprintf("g%d:%d(p%s)", r.gen, r.first, r.w)
		}
		return fmt.Sprintf("g%d:%d-%d(p%s)", r.gen, r.first, r.last, r.w)
	}
	var parts []string
	for i, r := range runs {
		if len(runs) > 2*limit && i == limit {
			parts = append(parts, fmt.Sprintf("... %d runs ...", len(runs)-2*limit))
		}
		if len(runs) > 2*limit && i >= limit && i < len(runs)-limit {
			continue
		}
		parts = append(parts, text(r))
	}
	return strings.Join(parts, " ")
}

// ranges renders sorted integers as "3-7 9 12-40" (at most limit ranges, then "...").
func ranges[T int | int64](xs []T, limit int) string {
	var parts []string
	for i := 0; i < len(xs); {
		j := i
		for j+1 < len(xs) && xs[j+1] == xs[j]+1 {
			j++
		}
		if len(parts) == limit {
			parts = append(parts, "...")
			break
		}
		if i == j {
			parts = append(parts, fmt.Sprint(xs[i]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", xs[i], xs[j]))
		}
		i = j + 1
	}
	return strings.Join(parts, " ")
}

// String renders the audit as a table, then the details of whatever is wrong.
func (a *auditResult) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "audit of %s on B: missing %d, duplicated %d, reordered %d, stale writes %d", a.Topic, a.Missing, a.Duplicated, a.Reordered, a.Stale)
	txns := a.AbortedOnA+a.AbortedOnB > 0
	if txns {
		fmt.Fprintf(&b, ", of aborted source transactions %d (of %d on A)", a.AbortedOnB, a.AbortedOnA)
	}
	if a.Unparsed+a.Unexpected > 0 {
		fmt.Fprintf(&b, ", foreign records %d, of other generations %d", a.Unparsed, a.Unexpected)
	}
	b.WriteString("\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', tabwriter.AlignRight)
	head, aborted := "", func(auditRow) string { return "" }
	if txns {
		head, aborted = "aborted on A\taborted on B\t", func(r auditRow) string { return fmt.Sprintf("%d\t%d\t", r.AbortedOnA, r.AbortedOnB) }
	}
	fmt.Fprintln(tw, "partition\tgen\tacked on A\texcluded\ton B\tmissing\tduplicated\treordered\tstale\tunacked on B\t"+head+"producer ids\t")
	for _, r := range a.Rows {
		ids := make([]string, len(r.Producers))
		for i, id := range r.Producers {
			ids[i] = fmt.Sprint(id)
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s%d: %s\t\n", r.Partition, r.Gen, r.Acked, r.Excluded, r.OnB,
			r.Missing, r.Duplicated, r.Reordered, r.Stale, r.Unrequired, aborted(r), len(ids), strings.Join(ids, ","))
	}
	tw.Flush()
	for _, r := range a.Rows {
		if r.Missing > 0 {
			fmt.Fprintf(&b, "missing in partition %d gen %d: sequences %s (acknowledged by A at offsets %s; the partition's first record read on B: %s)\n",
				r.Partition, r.Gen, r.MissingSeqs, r.MissingOnA, cmp.Or(r.FirstOnB, "none"))
		}
	}
	for _, g := range a.StaleWrites {
		fmt.Fprintf(&b, "stale writes in partition %d: %d records of superseded producer id %d epoch %d at offsets %s on B\n",
			g.Partition, len(g.Offsets), g.ProducerID, g.Epoch, ranges(g.Offsets, 8))
	}
	shown := map[int]bool{}
	for _, r := range a.Rows {
		if r.Duplicated+r.Reordered+r.Stale > 0 && r.Partition < len(a.Order) && !shown[r.Partition] {
			shown[r.Partition] = true
			fmt.Fprintf(&b, "log order of partition %d (gGEN:SEQS(pPRODUCER)): %s\n", r.Partition, a.Order[r.Partition])
		}
	}
	b.WriteString("producer runs per partition (id×records, id.epoch×records past epoch 0; stale records not counted):\n")
	for p, r := range a.Runs {
		if len(r) > 300 {
			r = r[:300] + " ..."
		}
		fmt.Fprintf(&b, "  %d: %s\n", p, r)
	}
	return b.String()
}

// expectClean fails the test for each kind of damage listed in kinds ("missing", "duplicated", "reordered",
// "stale", "aborted": records of aborted source transactions on B) that the audit found.
func expectClean(t *testing.T, a *auditResult, kinds ...string) {
	t.Helper()
	got := map[string]int{"missing": a.Missing, "duplicated": a.Duplicated, "reordered": a.Reordered, "stale": a.Stale,
		"aborted": a.AbortedOnB}
	for _, k := range kinds {
		n, ok := got[k]
		if !ok {
			t.Fatalf("expectClean: unknown kind %q", k)
		}
		if n != 0 {
			t.Errorf("%s: %d %s records (want 0); see the audit table above", a.Topic, n, k)
		}
	}
	if a.Unparsed > 0 {
		t.Errorf("%s: %d records on B that the sequenced producer did not write", a.Topic, a.Unparsed)
	}
}

// TestAuditRules checks the audit itself on a hand-made log.
func TestAuditRules(t *testing.T) {
	e := &expected{topic: "t", gen: 1, offsets: [][]int64{{0, 1, 2, 3, 4, 5, seqFailed}}, excluded: []int{0},
		abortedGen: abortedGen(1), abortedOnA: []int{3}}
	rec := func(seq int, pid int64, off int64) remoteRecord {
		return remoteRecord{offset: off, gen: 1, seq: seq, parsed: true, producerID: pid}
	}
	log := [][]remoteRecord{{
		rec(0, 10, 0), rec(1, 10, 1), rec(2, 10, 2), // producer 10
		rec(2, 11, 3), rec(4, 11, 4), // 11 supersedes 10: 2 again is a duplicate; 3 skipped so far
		rec(3, 10, 5), // 10 comes back: stale, and 3 < 4 is a reordering
		rec(6, 11, 6), // 6 failed on A: on B anyway, allowed
		{offset: 7, gen: abortedGen(1), seq: 0, parsed: true, producerID: 11}, // of an aborted source transaction
	}}
	a := audit("t", log, e)
	r := a.Rows[0]
	t.Log("\n" + a.String())
	check := func(what string, got, want int) {
		if got != want {
			t.Errorf("%s: got %d, want %d", what, got, want)
		}
	}
	check("acked", r.Acked, 6)
	check("on B", r.OnB, 7)
	check("missing", r.Missing, 1) // 5
	check("duplicated", r.Duplicated, 1)
	check("reordered", r.Reordered, 1)
	check("stale", r.Stale, 1)
	check("unrequired", r.Unrequired, 1)
	check("producers", len(r.Producers), 2)
	check("aborted on A", r.AbortedOnA, 3)
	check("aborted on B", r.AbortedOnB, 1)
	check("aborted on B (total)", a.AbortedOnB, 1)
	check("of other generations", a.Unexpected, 0)
	if len(a.StaleWrites) != 1 || a.StaleWrites[0].ProducerID != 10 || a.StaleWrites[0].Offsets[0] != 5 {
		t.Errorf("stale writes: %+v", a.StaleWrites)
	}
	// Exactly-once: every owner of a task writes with the task's transactional.id, so with the same producer
	// id; each owner's InitTransactions bumps the epoch. A record of an older epoch after a newer one is a
	// fenced owner's.
	txn := func(seq int, epoch int16, off int64) remoteRecord {
		return remoteRecord{offset: off, gen: 1, seq: seq, parsed: true, producerID: 20, epoch: epoch}
	}
	a = audit("t", [][]remoteRecord{{txn(0, 0, 0), txn(1, 1, 2), txn(2, 0, 4), txn(3, 1, 6)}},
		&expected{topic: "t", gen: 1, offsets: [][]int64{{0, 1, 2, 3}}, excluded: []int{0}})
	t.Log("\n" + a.String())
	check("stale of an older epoch", a.Stale, 1)
	if len(a.StaleWrites) != 1 || a.StaleWrites[0].ProducerID != 20 || a.StaleWrites[0].Epoch != 0 || a.StaleWrites[0].Offsets[0] != 4 {
		t.Errorf("stale writes of an older epoch: %+v", a.StaleWrites)
	}
	if got := ranges([]int{1, 2, 3, 5, 7, 8}, 6); got != "1-3 5 7-8" {
		t.Errorf("ranges: %q", got)
	}
}
