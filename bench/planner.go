package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
	"github.com/kmirror/kmirror/parallelism"
)

// plannerFigures are what the hot and skew scenarios measure of the connector's planner.
type plannerFigures struct {
	// Assignment is the run's kmirror.task.assignment and move keys, as the variant set them.
	Assignment string `json:"assignment"`
	// SettleS is the time from the start of the settling load until the hot topic's partitions sat on
	// distinct tasks (hot), or -1 when they did not within the limit.
	SettleS float64 `json:"settle_s,omitempty"`
	// HotTasks is how many tasks held the hot topic's partitions when the measured copy started (hot).
	HotTasks int `json:"hot_tasks,omitempty"`
	// Moves counts the partitions the planner moved over the whole run (kmirror_connector_partition_moves_total).
	Moves float64 `json:"moves"`
	// FirstMoveS and FollowedS: skew, from the switch of the load to the first move taking the new hot topic's
	// partitions apart, and to the moment they sat on distinct tasks; -1 when not seen.
	FirstMoveS float64 `json:"first_move_s,omitempty"`
	FollowedS  float64 `json:"followed_s,omitempty"`
	// MoveLog is every move the run saw in /partitions, as "at from→to out/in: reason".
	MoveLog []string     `json:"move_log,omitempty"`
	Audit   *auditResult `json:"audit,omitempty"`
	// DuplicatedMoved counts the audit's duplicates in partitions the planner moved; the others' come from
	// elsewhere (PipelineRestarts).
	DuplicatedMoved int64 `json:"duplicated_in_moved_partitions"`
	// PipelineRestarts counts the pipelines kmirror's log says were halted or failed and restarted from their
	// acknowledged offsets (a target that acknowledged too slowly, among others): each may write again what it
	// had in flight.
	PipelineRestarts int `json:"pipeline_restarts"`
}

// auditResult is a per-record audit of the target: every partition's sequence numbers read back in full.
type auditResult struct {
	Written    int64 `json:"written"` // records acknowledged by the source
	Read       int64 `json:"read"`    // records read back from the target, duplicates included
	Missing    int64 `json:"missing"`
	Duplicated int64 `json:"duplicated"`
	Reordered  int64 `json:"reordered"`
	// DuplicatedIn counts the duplicates of each partition that has any ("topic-partition").
	DuplicatedIn map[string]int64 `json:"duplicated_in,omitempty"`
}

// auditSequences compares what was written (records 0..n-1 of each source partition) with the sequences
// read from the target (keyed by the source partition). A sequence read again is a duplicate; one read
// after a higher one, for the first time, is reordered; one never read is missing.
func auditSequences(written map[kafkabench.TP]int64, read map[kafkabench.TP][]int64) auditResult {
	a := auditResult{DuplicatedIn: map[string]int64{}}
	for tp, n := range written {
		a.Written += n
		seen := make(map[int64]bool, n)
		high := int64(-1)
		for _, s := range read[tp] {
			a.Read++
			switch {
			case seen[s]:
				a.Duplicated++
				a.DuplicatedIn[tp.String()]++
				continue
			case s < high:
				a.Reordered++
			}
			seen[s] = true
			high = max(high, s)
		}
		for s := range n {
			if !seen[s] {
				a.Missing++
			}
		}
	}
	return a
}

// weightedPartitions lists hot's partitions and cold's so that a round-robin over the list gives hot the
// share share of the records (each partition of a group alike).
func weightedPartitions(hot, cold []kafkabench.TP, share float64) []kafkabench.TP {
	if len(cold) == 0 || share >= 1 {
		return hot
	}
	// k copies of every hot partition: k·|hot| / (k·|hot| + |cold|) = share.
	k := max(1, int(share*float64(len(cold))/((1-share)*float64(len(hot)))+0.5))
	out := make([]kafkabench.TP, 0, k*len(hot)+len(cold))
	for range k {
		out = append(out, hot...)
	}
	return append(out, cold...)
}

func connectorName(f flow) string { return "bench-" + f.alias }

// partitionsReport reads GET /connectors/{c}/partitions of a kmirror run.
func partitionsReport(ctx context.Context, inst *instance, f flow) (*parallelism.Report, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, inst.api+"/connectors/"+connectorName(f)+"/partitions", nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("partitions: %s", resp.Status)
	}
	var r parallelism.Report
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return nil, fmt.Errorf("partitions: %w", err)
	}
	return &r, nil
}

// topicTasks returns the distinct tasks that reported topic's partitions, and whether all n of them
// reported freshly.
func topicTasks(r *parallelism.Report, topic string, n int) (tasks int, complete bool) {
	seen := map[int]bool{}
	got := 0
	for _, p := range r.ByPartition {
		if p.Topic == topic && !p.Stale {
			seen[p.Task] = true
			got++
		}
	}
	return len(seen), got == n
}

// connectorAction pauses or resumes a kmirror run's connector and waits until every task says so.
func connectorAction(ctx context.Context, inst *instance, f flow, action, state string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, inst.api+"/connectors/"+connectorName(f)+"/"+action, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("%s: %s", action, resp.Status)
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if connectorState(inst, f) == state {
			return nil
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s: the connector's tasks are not %s after 60 s", action, state)
}

// connectorState is the state every task of the connector is in, or "" when they differ.
func connectorState(inst *instance, f flow) string {
	resp, err := http.Get(inst.api + "/connectors/" + connectorName(f) + "/status")
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var st struct {
		Connector struct {
			State string `json:"state"`
		} `json:"connector"`
		Tasks []struct {
			State string `json:"state"`
		} `json:"tasks"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil || len(st.Tasks) == 0 {
		return ""
	}
	for _, t := range st.Tasks {
		if t.State != st.Connector.State {
			return ""
		}
	}
	return st.Connector.State
}

// movesTotal sums kmirror_connector_partition_moves_total on the worker's /metrics.
func movesTotal(inst *instance) float64 {
	resp, err := http.Get(inst.api + "/metrics")
	if err != nil {
		return 0
	}
	defer resp.Body.Close()
	var total float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "kmirror_connector_partition_moves_total") {
			continue
		}
		if i := strings.LastIndexByte(line, ' '); i > 0 {
			v, _ := strconv.ParseFloat(line[i+1:], 64)
			total += v
		}
	}
	return total
}

// movedPartitions are the partitions ("topic-partition") any logged move took out or brought in.
func (m *moveLogger) movedPartitions() map[string]bool {
	out := map[string]bool{}
	for _, line := range m.log {
		for _, list := range []string{"out [", "in ["} {
			if _, rest, ok := strings.Cut(line, list); ok {
				names, _, _ := strings.Cut(rest, "]")
				for _, n := range strings.Fields(names) {
					out[n] = true
				}
			}
		}
	}
	return out
}

// pipelineRestarts counts the log lines of a kmirror run that say a replication pipeline restarts: halted for
// an overdue acknowledgement, or failed. A halt may be logged as a failure too, so this is an upper bound.
func pipelineRestarts(logPath string) int {
	b, err := os.ReadFile(logPath)
	if err != nil {
		return 0
	}
	return strings.Count(string(b), "waited too long for the target's acknowledgement; restarting") +
		strings.Count(string(b), "replication pipeline failed; restarting it")
}

// moveLogger collects the moves a run's /partitions shows, each once.
type moveLogger struct {
	seen map[string]bool
	log  []string
}

func (m *moveLogger) add(r *parallelism.Report) {
	if m.seen == nil {
		m.seen = map[string]bool{}
	}
	for i := len(r.Moves) - 1; i >= 0; i-- {
		mv := r.Moves[i]
		line := fmt.Sprintf("%s task %d→%d out %v in %v: %s", mv.At, mv.FromTask, mv.ToTask, mv.Out, mv.In, mv.Reason)
		if !m.seen[line] {
			m.seen[line] = true
			m.log = append(m.log, line)
			logf("move: %s", line)
		}
	}
}
