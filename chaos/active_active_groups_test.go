package chaos

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
	"github.com/kmirror/kmirror/connectors/provenance"
)

// originOf names the cluster whose producer wrote a generation (newAACase: A's is 1, B's 2).
func originOf(gen int) string {
	if gen == 1 {
		return "A"
	}
	return "B"
}

// readBoth reads every partition of the topic on both clusters.
func (a *aaCase) readBoth() map[string][][]kafkatest.Record {
	out := map[string][][]kafkatest.Record{}
	for _, cl := range aaClusters {
		out[cl] = make([][]kafkatest.Record, sourcePartitions)
		for p := range sourcePartitions {
			out[cl][p] = kafkatest.ReadAll(a.t, cl, a.topic, int32(p))
		}
	}
	return out
}

// checkHeaders returns how many records carry headers other than they must: a cluster's own records exactly
// what its producer wrote; a copy the application header its producer wrote (none when stripped), unchanged,
// and one provenance header naming the cluster the record was produced on.
func (a *aaCase) checkHeaders(stripB bool) int {
	a.t.Helper()
	wrong := 0
	report := func(cl string, r kafkatest.Record, why string) {
		wrong++
		if wrong <= 5 {
			a.t.Logf("%s partition %d offset %d (%.24s): %s; headers %v", cl, r.Partition, r.Offset, r.Value, why, r.Headers)
		}
	}
	for cl, parts := range a.readBoth() {
		for _, rs := range parts {
			for _, r := range rs {
				gen, _, ok := parseValue(r.Value)
				if !ok {
					continue // the audit counts these
				}
				origin := originOf(gen)
				var app, prov [][]byte
				for _, h := range r.Headers {
					switch h.Key {
					case appHeader:
						app = append(app, h.Value)
					case provenance.Header:
						prov = append(prov, h.Value)
					}
				}
				wantApp := "from " + origin
				switch {
				case stripB && origin == "B" && len(app) > 0:
					report(cl, r, "an application header on a record written without one")
				case !(stripB && origin == "B") && (len(app) != 1 || string(app[0]) != wantApp):
					report(cl, r, "the application header is not the producer's")
				}
				if origin == cl {
					if len(prov) > 0 {
						report(cl, r, "a provenance header on a record its producer wrote here")
					}
					continue
				}
				if len(prov) != 1 {
					report(cl, r, fmt.Sprintf("%d provenance headers on a copy", len(prov)))
					continue
				}
				if o, err := provenance.Decode(prov[0]); err != nil || o.Alias != origin {
					report(cl, r, fmt.Sprintf("provenance %q does not name %s", prov[0], origin))
				}
			}
		}
	}
	return wrong
}

// checkGroup commits two groups on A, one in the middle of each partition and one at its end, has the
// checkpoint connector A→B translate them, and compares what a consumer resuming on B at each translation
// reads with what the group read on A: it must skip no record of either origin it has not read (failing the
// test), and the records it reads again are counted. It returns the report.
func (a *aaCase) checkGroup(within time.Duration) string {
	t := a.t
	t.Helper()
	recs := a.readBoth()
	ck := a.checkpointName("A", "B")
	admin := newAdmin(t, "A")
	report := ""
	for _, at := range []string{"middle", "end"} {
		group := a.groupPrefix() + "-" + at
		committed := make([]int64, sourcePartitions)
		var offs []kafka.GroupOffset
		for p, rs := range recs["A"] {
			if len(rs) > 0 {
				committed[p] = rs[len(rs)-1].Offset + 1
				if at == "middle" {
					committed[p] = rs[len(rs)/2].Offset
				}
			}
			offs = append(offs, kafka.GroupOffset{Topic: a.topic, Partition: int32(p), Offset: committed[p]})
		}
		deadline := time.Now().Add(30 * time.Second)
		for {
			err := admin.AlterGroupOffsets(t.Context(), group, offs)
			if err == nil {
				break
			}
			if !kafka.IsRetriable(err) || time.Now().After(deadline) {
				t.Fatalf("commit group %s on A: %v", group, err)
			}
			time.Sleep(200 * time.Millisecond) // the group's coordinator is loading or moving
		}
		targets, exact := a.awaitTranslation(ck, group, committed, within)
		if targets == nil {
			report += fmt.Sprintf("%s: no translation; ", at)
			continue
		}
		skipped, reread, unread := 0, 0, 0
		for p := range sourcePartitions {
			read := map[string]bool{}
			for _, r := range recs["A"][p] {
				if r.Offset < committed[p] {
					read[string(r.Value)] = true
				}
			}
			resumed := map[string]bool{}
			for _, r := range recs["B"][p] {
				if r.Offset >= targets[p] {
					resumed[string(r.Value)] = true
					if read[string(r.Value)] {
						reread++
					}
				}
			}
			counted := map[string]bool{}
			for _, r := range recs["B"][p] {
				v := string(r.Value)
				if read[v] || counted[v] {
					continue
				}
				counted[v] = true
				unread++
				if !resumed[v] {
					skipped++
					if skipped <= 5 {
						t.Logf("group %s partition %d: committed %d on A, resumes at %d on B, skips %.24s at %d", group, p, committed[p], targets[p], r.Value, r.Offset)
					}
				}
			}
		}
		report += fmt.Sprintf("%s of A (positions %v) → B %v (exact partitions %d of %d): skipped %d of the %d records of both origins it had not read, re-read %d; ",
			at, committed, targets, exact, sourcePartitions, skipped, unread, reread)
		if skipped > 0 {
			t.Errorf("group %s resumes on B past %d records of its topic it never read on A", group, skipped)
		}
	}
	return report
}

// awaitTranslation waits until the checkpoint connector shows every partition of the group at its committed
// offset with a target offset, and returns those and how many are exact (nil after a reported failure).
func (a *aaCase) awaitTranslation(ck, group string, committed []int64, within time.Duration) ([]int64, int) {
	t := a.t
	t.Helper()
	var last string
	deadline := time.Now().Add(within)
	for time.Now().Before(deadline) {
		var got []translation
		got, last = groupTranslations(a.c, ck, group)
		if len(got) == sourcePartitions {
			out := make([]int64, sourcePartitions)
			ok, exact := true, 0
			for _, o := range got {
				ok = ok && o.hasTarget && o.source == committed[o.partition]
				out[o.partition] = o.target
				if o.exact {
					exact++
				}
			}
			if ok {
				return out, exact
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Errorf("group %s never translated within %s; last answer: %s", group, within, last)
	return nil, 0
}

// translation is one partition of GET /connectors/{c}/groups/{g}/offsets.
type translation struct {
	partition      int
	source, target int64
	hasTarget      bool // target_offset is not null
	exact          bool
}

// groupTranslations reads the checkpoint connector's translations of a group; none (and the body, for a report)
// while it has none.
func groupTranslations(c *cluster, ck, group string) ([]translation, string) {
	code, body, err := c.do(http.MethodGet, "/connectors/"+ck+"/groups/"+group+"/offsets", nil)
	if err != nil || code != http.StatusOK {
		return nil, fmt.Sprintf("%d %s %v", code, body, err)
	}
	var resp struct {
		Offsets []struct {
			Partition    int             `json:"partition"`
			SourceOffset int64           `json:"source_offset"`
			Target       json.RawMessage `json:"target_offset"`
			Exact        bool            `json:"exact"`
		} `json:"offsets"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		return nil, string(body)
	}
	out := make([]translation, 0, len(resp.Offsets))
	for _, o := range resp.Offsets {
		v, err := strconv.ParseInt(string(o.Target), 10, 64)
		out = append(out, translation{partition: o.Partition, source: o.SourceOffset, target: v, hasTarget: err == nil, exact: o.Exact})
	}
	return out, string(body)
}
