package main

// The checkpoints scenario's report: its table, figures and goals.

import "fmt"

func (b *bench) finishCheckpoints(r *result) {
	status := b.record(r)
	f := r.Checkpoints
	logf("checkpoints / %s / %s: all exact after %.1f s; rounds first %.2f s, steady %.2f s, change %.2f s; move → visible %.1f s; CPU %.1f s, peak RSS %.0f MB (%.0f before); offset_ranges %s B, group_offsets %s B — %s",
		r.Variant, r.System, f.FirstCompleteS, f.FirstRoundS, f.SteadyRoundS, f.ChangeRoundS, f.MoveVisibleS, f.CPUS, f.PeakRSSMB, f.BaselineRSSMB,
		thousands(float64(f.OffsetRanges.TotalBytes)), thousands(float64(f.GroupOffsets.TotalBytes)), status)
}

func (b *bench) checkpointsMarkdown(w func(string, ...any)) {
	vs := b.variants("checkpoints")
	if len(vs) == 0 {
		return
	}
	ck := b.cfg.ck
	w("### Checkpoints (%s groups × %d partitions, %s records per partition; emit.checkpoints.interval.seconds=%.0f; source connector tasks.max=%d)\n\n",
		thousands(float64(ck.groups)), ck.partitions, thousands(float64(ck.records)), ck.interval.Seconds(), b.cfg.tasks)
	w("Rounds are the tasks' own `checkpoint round … took=` (DEBUG), the slowest task's. first: every checkpoint new; steady: nothing moved; change: every group moved +%d on every partition. all exact: connector creation → `GET /connectors/{c}/groups` lists every group with inexact_partitions 0. move → visible: the re-commit on A → the API shows every new offset (includes waiting for the next tick); read → visible: the change round's first read of the source (read_at) → the API shows every new offset (the bench polls the API every 200 ms during the first round, and after the change round only once its log lines are there: each poll over 100,000 translations costs PostgreSQL 0.1–0.4 s). GET groups: one `GET /connectors/{c}/groups` with every translation stored. replayed: two phases of a round run again by the bench between rounds with the functions the task calls — every group's committed offsets from A (`kafka.Admin.GroupOffsets`, 8 in flight) and the one offset-map query for every position (`store.OffsetRangesAround`); the rest of a steady round is mostly `store.PutGroupOffsets`. CPU: kmirror's, creation → change visible; per round: over the round's span. RSS: peak (VmHWM reset when the checkpoint connector is created), before the connector, between rounds (VmRSS when the change round starts), and the peak's growth per 1,000 translations (group × partition). PostgreSQL: `pg_total_relation_size` (heap, indexes, TOAST, free-space and visibility maps; page-granular, so a table of a few hundred rows shows mostly its minimum of pages) at the end, per 1,000 replicated partitions (offset_ranges) and per 1,000 translations (group_offsets); row data: `sum(pg_column_size(row))` of the live rows.\n\n", ck.advance)
	type row struct {
		v, name string
		r       *result
	}
	var rows []row
	for _, v := range vs {
		for _, x := range b.systemResults("checkpoints", v) {
			if x.r.Checkpoints != nil {
				rows = append(rows, row{v, x.name, x.r})
			}
		}
	}
	w("| variant | system | all exact s | first round s | steady round s | change round s | change round per 100k translations s | move → visible s | read → visible s | GET groups s | replayed: read groups s / offset-map query s | checkpoints written | verified groups (wrong partitions) | other CPU %% |\n")
	w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range rows {
		f := x.r.Checkpoints
		w("| %s | %s | %.1f | %.2f | %.2f | %.2f | %.2f | %.1f | %.1f | %.2f | %.2f / %.2f | %s | %s (%d) | %.0f |\n", x.v, x.name, f.FirstCompleteS,
			f.FirstRoundS, f.SteadyRoundS, f.ChangeRoundS, f.RoundPer100k, f.MoveVisibleS, f.ReadVisibleS, f.APIGroupsS, f.ReplayReadS, f.ReplayLookupS,
			thousands(float64(f.Checkpoints)), thousands(float64(f.Verified)), f.Wrong, f.OtherCPUPct)
	}
	w("\n| variant | system | kmirror CPU s: first / steady / change round | PostgreSQL CPU s: first / steady / change round | kmirror CPU s, creation → change visible | peak RSS MB (before / between rounds) | peak RSS growth MB per 1,000 translations | offset_ranges: rows, total B, B per 1,000 partitions (row data) | group_offsets: rows, total B, B per 1,000 translations (row data) |\n")
	w("|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, x := range rows {
		f := x.r.Checkpoints
		cpu, db := map[string]float64{}, map[string]float64{}
		for _, wv := range f.Waves {
			if _, ok := cpu[wv.Kind]; !ok {
				cpu[wv.Kind], db[wv.Kind] = wv.CPUS, wv.DBCPUS
			}
		}
		tbl := func(t pgTable) string {
			return fmt.Sprintf("%s, %s, %s (%s)", thousands(float64(t.Rows)), thousands(float64(t.TotalBytes)), thousands(t.Per1000),
				thousands(float64(t.TupleBytes)*1000/float64(max(t.Per, 1))))
		}
		w("| %s | %s | %.1f / %.1f / %.1f | %.1f / %.1f / %.1f | %.1f | %.0f (%.0f / %.0f) | %.2f | %s | %s |\n", x.v, x.name,
			cpu["first"], cpu["steady"], cpu["change"], db["first"], db["steady"], db["change"], f.CPUS,
			f.PeakRSSMB, f.BaselineRSSMB, f.SettledRSSMB, f.RSSPer1000, tbl(f.OffsetRanges), tbl(f.GroupOffsets))
	}
	w("\n")
}

// checkpointGoals checks the rounds against the interval.
func (b *bench) checkpointGoals() []string {
	var out []string
	for _, v := range b.variants("checkpoints") {
		for _, sys := range systemOrder {
			r := b.find("checkpoints", v, sys)
			if r == nil || r.Checkpoints == nil || r.Checkpoints.FirstRoundS == 0 {
				continue
			}
			f := r.Checkpoints
			slowest := max(f.FirstRoundS, f.SteadyRoundS, f.ChangeRoundS)
			verdict := "met"
			if slowest > f.IntervalS || r.Error != "" {
				verdict = "**not met**"
			}
			out = append(out, fmt.Sprintf("checkpoints %s / %s: every round within the %.0f s interval: slowest %.2f s — %s", v, sys, f.IntervalS, slowest, verdict))
		}
	}
	return out
}
