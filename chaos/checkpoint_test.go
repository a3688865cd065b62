package chaos

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// requireExactResumes fails consumer groups over from A to B after the case's faults, where those faults left
// duplicates on B: for each partition, a group committed at the first record B holds twice (the first record
// re-sent after a kill), one committed just after it, and one at the end. A MirrorCheckpointConnector
// translates them; a consumer resuming on B at each translated offset must read exactly the records of A from
// the committed offset on: none missing, none twice, in order. Records that B itself holds twice further on
// (the re-sent range of a later kill) are read twice from any position: only those read twice beyond the best
// position B allows (bestResume) count against the translation.
func (s *scenario) requireExactResumes(within time.Duration) {
	t := s.t
	t.Helper()
	srcValues := make([]map[string]int64, sourcePartitions) // value -> offset on A
	src := make([][]kafkatest.Record, sourcePartitions)
	dst := make([][]kafkatest.Record, sourcePartitions)
	positions := make([][3]int64, sourcePartitions)
	for p := range sourcePartitions {
		src[p] = kafkatest.ReadAll(t, "A", s.topic, int32(p))
		dst[p] = kafkatest.ReadAll(t, "B", s.remote, int32(p))
		srcValues[p] = map[string]int64{}
		for _, r := range src[p] {
			srcValues[p][string(r.Value)] = r.Offset
		}
		resent := int64(-1)
		seen := map[string]bool{}
		for _, r := range dst[p] {
			if seen[string(r.Value)] {
				resent = srcValues[p][string(r.Value)]
				break
			}
			seen[string(r.Value)] = true
		}
		if resent < 0 && len(src[p]) > 0 {
			resent = src[p][len(src[p])/2].Offset // this partition got no duplicate: somewhere in the middle
		}
		end := int64(0)
		if n := len(src[p]); n > 0 {
			end = src[p][n-1].Offset + 1
		}
		positions[p] = [3]int64{resent, min(resent+1, end), end}
	}
	admin := newAdmin(t, "A")
	groups := make([]string, 3)
	for i := range groups {
		groups[i] = fmt.Sprintf("ck-%s-%d", s.name, i)
		var offs []kafka.GroupOffset
		for p := range sourcePartitions {
			offs = append(offs, kafka.GroupOffset{Topic: s.topic, Partition: int32(p), Offset: positions[p][i]})
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := admin.AlterGroupOffsets(t.Context(), groups[i], offs)
			if err == nil {
				break
			}
			if !kafka.IsRetriable(err) || time.Now().After(deadline) {
				t.Fatalf("commit group %s on A: %v", groups[i], err)
			}
			time.Sleep(200 * time.Millisecond) // the group's coordinator is loading or moving
		}
	}
	ck := "ck-" + s.name
	s.c.putConfig(ck, map[string]string{
		"connector.class":                      "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":                 "A",
		"target.cluster.alias":                 "B",
		"source.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "A"),
		"target.cluster.bootstrap.servers":     kafkatest.Bootstrap(t, "B"),
		"groups":                               regexp.QuoteMeta(ck) + "-.*",
		"topics":                               regexp.QuoteMeta(s.topic),
		"emit.checkpoints.interval.seconds":    "1",
		"refresh.groups.interval.seconds":      "1",
		"checkpoints.topic.replication.factor": "1",
	})
	wrong := 0
	for i, g := range groups {
		targets := s.awaitExactTranslation(ck, g, func(p int) int64 { return positions[p][i] }, within)
		if targets == nil {
			continue
		}
		for p := range sourcePartitions {
			var want, got []string
			for _, r := range src[p] {
				if r.Offset >= positions[p][i] {
					want = append(want, string(r.Value))
				}
			}
			for _, r := range dst[p] {
				if r.Offset >= targets[p] {
					got = append(got, string(r.Value))
				}
			}
			missing, dups, reordered := compareResume(want, got)
			var ideal []string
			for _, r := range dst[p][bestResume(want, dst[p]):] {
				ideal = append(ideal, string(r.Value))
			}
			_, onB, _ := compareResume(want, ideal)
			dups = max(dups-onB, 0)
			if missing+dups+reordered > 0 {
				wrong++
				t.Errorf("group %s partition %d: committed %d on A, resumes at %d on B: %d missing, %d read twice, %d reordered",
					g, p, positions[p][i], targets[p], missing, dups, reordered)
			}
		}
	}
	t.Logf("failed over 3 groups x %d partitions (at re-sent records, just after them, at the end; positions %v): %d resumes not exact",
		sourcePartitions, positions, wrong)
}

// awaitExactTranslation waits until the checkpoint connector shows every partition of the group at its
// committed offset, translated exactly, and returns the target offsets (nil after a reported failure).
func (s *scenario) awaitExactTranslation(ck, group string, committed func(p int) int64, within time.Duration) []int64 {
	t := s.t
	t.Helper()
	var last string
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var got []translation
		got, last = groupTranslations(s.c, ck, group)
		if len(got) == sourcePartitions {
			out := make([]int64, sourcePartitions)
			ok := true
			for _, o := range got {
				ok = ok && o.hasTarget && o.exact && o.source == committed(o.partition)
				out[o.partition] = o.target
			}
			if ok {
				return out
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("group %s never translated exactly within %s; last answer: %s", group, within, last)
	return nil
}

// bestResume returns the index in dst of the latest position from which a reader still reads every value of
// want: where a consumer committed at want's first record resumes exactly, when B holds re-sent ranges.
func bestResume(want []string, dst []kafkatest.Record) int {
	need := make(map[string]bool, len(want))
	for _, v := range want {
		need[v] = true
	}
	left := len(need)
	for i := len(dst) - 1; i >= 0 && left > 0; i-- {
		if v := string(dst[i].Value); need[v] {
			need[v] = false
			if left--; left == 0 {
				return i
			}
		}
	}
	if left == 0 {
		return len(dst) // nothing to read
	}
	return 0 // B lacks some of them: a reader from the start misses them too
}

// compareResume counts what a resumed consumer reads wrong against what it should read.
func compareResume(want, got []string) (missing, dups, reordered int) {
	pos := make(map[string]int, len(want))
	for i, v := range want {
		pos[v] = i
	}
	seen := map[string]bool{}
	last := -1
	for _, v := range got {
		i, ok := pos[v]
		switch {
		case !ok || seen[v]:
			dups++
		case i < last:
			reordered++
		}
		if ok {
			seen[v] = true
			last = max(last, i)
		}
	}
	for _, v := range want {
		if !seen[v] {
			missing++
		}
	}
	return missing, dups, reordered
}

// TestBestResume checks bestResume on a hand-made log with two re-sent ranges.
func TestBestResume(t *testing.T) {
	var dst []kafkatest.Record
	for _, v := range []string{"a", "b", "c", "b", "c", "d", "e", "d", "e", "f"} {
		dst = append(dst, kafkatest.Record{Value: []byte(v)})
	}
	want := []string{"b", "c", "d", "e", "f"} // committed at the first re-sent record
	if got := bestResume(want, dst); got != 3 {
		t.Errorf("bestResume: %d, want 3 (the second copy of b)", got)
	}
	var from3 []string
	for _, r := range dst[3:] {
		from3 = append(from3, string(r.Value))
	}
	if missing, dups, reordered := compareResume(want, from3); missing != 0 || dups != 2 || reordered != 0 {
		t.Errorf("from the best position: missing %d, read twice %d, reordered %d; want 0, 2 (d and e, re-sent further on), 0", missing, dups, reordered)
	}
	if got := bestResume(nil, dst); got != len(dst) {
		t.Errorf("bestResume of nothing: %d, want %d", got, len(dst))
	}
	if got := bestResume([]string{"x"}, dst); got != 0 {
		t.Errorf("bestResume of a value B lacks: %d, want 0", got)
	}
}
