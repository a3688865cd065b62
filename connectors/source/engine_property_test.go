package source

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/kmirror/kmirror/connectors/kafkafake"
	"github.com/kmirror/kmirror/connectors/mm2offsets"
	"github.com/kmirror/kmirror/kmtype"
)

// value is what the source holds at offset off of partition part in incarnation inc of topic t.
func value(inc int, part int32, off int64) string { return fmt.Sprintf("%d/%d/%d", inc, part, off) }

func parseValue(v string) (inc int, part int32, off int64) {
	f := strings.Split(v, "/")
	inc, _ = strconv.Atoi(f[0])
	p, _ := strconv.Atoi(f[1])
	off, _ = strconv.ParseInt(f[2], 10, 64)
	return inc, int32(p), off
}

// TestEnginesKeepTheInvariantsUnderFaults runs the run skeleton on both engines against the double, through
// pipelines that fail and restart under a random fault schedule of the target (refused, lost and delayed
// acknowledgements, acknowledgements without an offset, a fatal or fenced producer, a failed authentication, a
// full queue), of the lease (lapsed, revoked) and of the source (compaction gaps, transaction markers,
// retention, client-wide consumer errors, a re-created topic). It checks what the run may never do: commit an
// offset beyond what the target holds, write a partition out of order, move a committed offset backwards
// (other than for a new topic id), hand a record over while the lease is not valid, or leave records
// retention deleted unreported or report them twice; and that, the faults over, everything arrives.
func TestEnginesKeepTheInvariantsUnderFaults(t *testing.T) {
	for _, dp := range []DataPath{DataPathGo, DataPathC} {
		t.Run(string(dp), func(t *testing.T) {
			rapid.Check(t, func(rt *rapid.T) { runUnderFaults(rt, dp, false) })
		})
	}
	// Exactly-once runs on the Go engine only (usesCPath); there the target's read_committed view must hold
	// each record once.
	t.Run("go-exactly-once", func(t *testing.T) {
		rapid.Check(t, func(rt *rapid.T) { runUnderFaults(rt, DataPathGo, true) })
	})
}

var faultKinds = []kafkafake.Fault{kafkafake.Accept, kafkafake.Accept, kafkafake.Refuse, kafkafake.DropAck, kafkafake.Unconfirmed,
	kafkafake.Delay, kafkafake.GoFatal, kafkafake.Fence, kafkafake.AuthFail, kafkafake.TooLarge}

func runUnderFaults(rt *rapid.T, dp DataPath, eos bool) {
	source, target := kafkafake.NewLog(), kafkafake.NewTarget()
	if _, err := source.CreateTopic("t", 2); err != nil {
		rt.Fatal(err)
	}
	if _, err := target.CreateTopic("A.t", 2); err != nil {
		rt.Fatal(err)
	}
	if _, err := target.CreateTopic(mm2offsets.Topic("A"), mm2offsets.DefaultPartitions); err != nil {
		rt.Fatal(err)
	}
	// What the target holds for a reader: in exactly-once mode, what committed transactions wrote.
	records := func(part int32) []kafkafake.Entry {
		es, _ := target.Entries("A.t", part)
		var out []kafkafake.Entry
		for _, e := range es {
			if !e.Marker && (!eos || e.Committed) {
				out = append(out, e)
			}
		}
		return out
	}
	inc := 0
	fill := func(n int) {
		for part := int32(0); part < 2; part++ {
			for range n {
				switch rapid.IntRange(0, 9).Draw(rt, "source event") {
				case 0:
					if err := source.Skip("t", part, 2); err != nil { // compaction
						rt.Fatal(err)
					}
				case 1: // a committed transaction: its marker takes an offset
					tx := source.BeginTxn()
					_, _, end, _ := offsetsOf(source, part)
					if _, err := tx.Append("t", part, kafkafake.Message{Value: []byte(value(inc, part, end))}); err != nil {
						rt.Fatal(err)
					}
					if err := tx.Commit(); err != nil {
						rt.Fatal(err)
					}
					continue
				}
				_, _, end, _ := offsetsOf(source, part)
				if _, err := source.Append("t", part, kafkafake.Message{Value: []byte(value(inc, part, end))}); err != nil {
					rt.Fatal(err)
				}
			}
		}
	}
	fill(rapid.IntRange(1, 30).Draw(rt, "records"))

	plan := rapid.SliceOfN(rapid.SampledFrom(faultKinds), 0, 40).Draw(rt, "faults")
	var planMu sync.Mutex
	target.SetFaults(func(a kafkafake.Attempt) kafkafake.Fault {
		planMu.Lock()
		defer planMu.Unlock()
		if a.Seq < len(plan) {
			return plan[a.Seq]
		}
		return kafkafake.Accept
	})
	released := make(chan struct{})
	defer close(released)
	go func() { // delayed records go after a moment
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-released:
				return
			case <-tick.C:
				target.Release()
			}
		}
	}()

	lease := &doubleLease{valid: true, revoked: make(chan struct{}), lapseAt: rapid.IntRange(0, 200).Draw(rt, "lease lapses at check"),
		revoke: rapid.IntRange(0, 3).Draw(rt, "lapse revokes") == 0}
	var violations []string
	var vmu sync.Mutex
	violate := func(format string, args ...any) {
		vmu.Lock()
		defer vmu.Unlock()
		violations = append(violations, fmt.Sprintf(format, args...))
	}
	lastCommit := map[int32]kmtype.Offset{}
	env := &doubleEnv{lease: lease, stop: context.Background(), stored: map[int32]kmtype.Offset{}}
	env.check = func(offsets []kmtype.Offset) {
		for _, o := range offsets {
			part, _ := jsonInt(o.Partition["partition"])
			acked, _ := jsonInt(o.Offset["offset"])
			if prev, ok := lastCommit[int32(part)]; ok && prev.SourceID == o.SourceID {
				if p, _ := jsonInt(prev.Offset["offset"]); acked < p {
					violate("partition %d: committed offset %d after %d of the same topic id", part, acked, p)
				}
			}
			lastCommit[int32(part)] = o
			if missing := missingBelow(source, records(int32(part)), int32(part), acked, o.SourceID); missing != "" {
				violate("partition %d: committed %d while the target lacks %s", part, acked, missing)
			}
		}
	}

	task := doubleTask(rt, dp, eos)
	queue := rapid.SampledFrom([]int{0, 3}).Draw(rt, "producer queue limit (0: unbounded)")
	clientsGo := fakeGoClients{source: source, target: target, queueLimit: queue}
	clientsC := fakeCClients{source: source, target: target, queueLimit: queue}
	handOver := func() {
		if !lease.isValid() {
			violate("a record handed to the producer while the lease was not valid")
		}
	}
	clientsGo.handOver, clientsC.handOver = handOver, handOver

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	r, err := task.prepare(ctx, env)
	if err != nil {
		rt.Fatal(err)
	}
	defer r.end(nil)
	if x, ok := r.txn.(*sourceTxns); ok {
		x.readTopic = committedReader(target)
	}
	engine := func() engine {
		if dp == DataPathC {
			return &cEngine{r: r, clients: clientsC}
		}
		return &goEngine{r: r, clients: clientsGo}
	}
	recreate := rapid.IntRange(0, 3).Draw(rt, "recreate") == 0
	// Pipelines under faults, then a quiet one until everything arrived.
	var ended error
	deleted := map[int32][]int64{} // offsets of records retention deleted
	for pipeline := 0; pipeline < 6 && ended == nil; pipeline++ {
		switch rapid.IntRange(0, 7).Draw(rt, "client-wide consumer error") {
		case 0:
			source.FailNextPoll(kafkafake.ErrTimedOut) // the source unreachable for a moment
		case 1:
			source.FailNextPoll(kafkafake.ErrAuthentication) // the task fails, naming the cluster
		}
		if pipeline > 0 && !recreate && rapid.IntRange(0, 2).Draw(rt, "retention") == 0 {
			part := int32(rapid.IntRange(0, 1).Draw(rt, "retention partition"))
			entries, _ := source.Entries("t", part)
			lo, end, _, _ := offsetsOf(source, part)
			before := rapid.Int64Range(lo, end).Draw(rt, "retention deletes before")
			// A partition without an acknowledged record starts again from the log start, as a new task does:
			// what retention deleted before its first record is not the task's to report.
			if acked, _ := r.parts[part].progress(); acked >= 0 {
				for _, e := range entries {
					if e.Offset > acked && e.Offset < before && !e.Marker {
						deleted[part] = append(deleted[part], e.Offset)
					}
				}
			}
			if err := source.DeleteRecordsBefore("t", part, before); err != nil {
				rt.Fatal(err)
			}
		}
		if pipeline == 2 && recreate {
			if err := source.DeleteTopic("t"); err != nil {
				rt.Fatal(err)
			}
			if _, err := source.CreateTopic("t", 2); err != nil {
				rt.Fatal(err)
			}
			inc++
			fill(rapid.IntRange(1, 10).Draw(rt, "records after re-creation"))
		}
		runCtx, stop := context.WithTimeout(ctx, 100*time.Millisecond)
		err := r.replicateWith(runCtx, engine())
		stop()
		rt.Logf("pipeline %d: %v", pipeline, err)
		switch {
		case err == nil, errorIsPipeline(err), err == errRecreated:
		case err == errLeaseRevoked:
			ended = err
		default:
			ended = err // a failure the task reports (an authentication, a record too large)
		}
	}
	if ended == nil && lease.hold() {
		ended = errLeaseRevoked
	}
	if ended == nil {
		// After the faults, the lease's lapses included, everything reaches the target.
		planMu.Lock()
		plan = nil
		planMu.Unlock()
		deadline := time.Now().Add(5 * time.Second)
		for missingBelow(source, records(0), 0, 1<<40, "") != "" || missingBelow(source, records(1), 1, 1<<40, "") != "" {
			runCtx, stop := context.WithTimeout(ctx, 100*time.Millisecond)
			_ = r.replicateWith(runCtx, engine())
			stop()
			if time.Now().After(deadline) {
				break
			}
		}
		for part := int32(0); part < 2; part++ {
			if m := missingBelow(source, records(part), part, 1<<40, ""); m != "" {
				violate("partition %d: after the faults, the target still lacks %s", part, m)
			}
		}
	}
	for part := int32(0); part < 2; part++ {
		if o := outOfOrder(records(part)); o != "" {
			violate("partition %d: %s", part, o)
		}
		if eos {
			if d := duplicated(records(part)); d != "" {
				violate("partition %d: exactly-once, yet %s", part, d)
			}
		}
		if g := gapsReported(records(part), env, part, deleted[part]); ended == nil && g != "" {
			violate("partition %d: %s", part, g)
		}
	}
	for part := int32(0); part < 2; part++ {
		got := records(part)
		rt.Logf("partition %d: %d records on the target, commits %v", part, len(got), env.stored[part].Offset)
	}
	if len(violations) > 0 {
		rt.Fatalf("%s engine: %s", dp, strings.Join(violations, "; "))
	}
}

func errorIsPipeline(err error) bool {
	_, ok := err.(*pipelineError)
	return ok
}

func offsetsOf(l *kafkafake.Log, part int32) (start, end, stable int64, err error) {
	start, end, stable, err = l.Offsets("t", part)
	return start, end, stable, err
}

// missingBelow names the first record of the source's current incarnation at or below offset acked that the
// target does not hold ("" when it holds them all). The source id, when given, must be the current one.
func missingBelow(source *kafkafake.Log, got []kafkafake.Entry, part int32, acked int64, sourceID string) string {
	if sourceID != "" && sourceID != source.TopicID("t") {
		return "" // the commit belongs to a deleted incarnation, whose records are gone
	}
	src, err := source.Entries("t", part)
	if err != nil {
		return ""
	}
	have := map[string]bool{}
	for _, e := range got {
		have[string(e.Message.Value)] = true
	}
	for _, e := range src {
		if e.Offset > acked {
			break
		}
		if e.Marker || e.Aborted {
			continue
		}
		if v := string(e.Message.Value); !have[v] {
			return v
		}
	}
	return ""
}

// outOfOrder names a target record that came before a record of the same source incarnation and partition
// that precedes it at the source ("" if there is none): copies sent again after a restart may repeat what
// came before, but a record is never written before one that precedes it.
func outOfOrder(got []kafkafake.Entry) string {
	seen := map[int]map[int64]bool{}
	maxOf := map[int]int64{}
	for _, e := range got {
		inc, _, off := parseValue(string(e.Message.Value))
		if seen[inc] == nil {
			seen[inc] = map[int64]bool{}
			maxOf[inc] = -1
		}
		seen[inc][off] = true
		maxOf[inc] = max(maxOf[inc], off)
	}
	// Every record of an incarnation below the highest one written must have been written before the first
	// copy of any later record: check by position.
	firstAt := map[string]int{}
	for i, e := range got {
		if _, ok := firstAt[string(e.Message.Value)]; !ok {
			firstAt[string(e.Message.Value)] = i
		}
	}
	for v, i := range firstAt {
		inc, p, off := parseValue(v)
		for prev := range seen[inc] {
			if prev < off {
				if j := firstAt[value(inc, p, prev)]; j > i {
					return fmt.Sprintf("%s written before %s", v, value(inc, p, prev))
				}
			}
		}
	}
	return ""
}

// gapsReported checks the data-not-replicated notices the task shows at the end for a partition against the
// records retention deleted: each deleted record the target does not hold is in a notice's range, and no
// record is in two notices' ranges. (A run that ended, its lease revoked or the task failed, leaves the
// reporting to the next owner.)
func gapsReported(got []kafkafake.Entry, env *doubleEnv, part int32, deleted []int64) string {
	env.mu.Lock()
	defer env.mu.Unlock()
	var ranges [][2]int64
	for _, n := range env.notices {
		if n.Kind == NoticeDataNotReplicated && n.Partition != nil && *n.Partition == part && n.FirstOffset != nil && n.LastOffset != nil {
			ranges = append(ranges, [2]int64{*n.FirstOffset, *n.LastOffset})
		}
	}
	for i, a := range ranges {
		for _, b := range ranges[i+1:] {
			if a[0] <= b[1] && b[0] <= a[1] {
				return fmt.Sprintf("records %d-%d reported lost twice (%v and %v)", max(a[0], b[0]), min(a[1], b[1]), a, b)
			}
		}
	}
	have := map[string]bool{}
	for _, e := range got {
		have[string(e.Message.Value)] = true
	}
	for _, off := range deleted {
		if have[value(0, part, off)] {
			continue
		}
		covered := false
		for _, rg := range ranges {
			covered = covered || rg[0] <= off && off <= rg[1]
		}
		if !covered {
			return fmt.Sprintf("record %d was deleted before it was replicated, and no notice says so (notices: %v)", off, ranges)
		}
	}
	return ""
}

// duplicated names a record the target holds twice ("" if none).
func duplicated(got []kafkafake.Entry) string {
	seen := map[string]bool{}
	for _, e := range got {
		v := string(e.Message.Value)
		if seen[v] {
			return v + " written twice"
		}
		seen[v] = true
	}
	return ""
}
