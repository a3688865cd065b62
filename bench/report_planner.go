package main

import (
	"fmt"
	"strings"
)

// plannerMarkdown writes the hot and skew scenarios' tables.
func (b *bench) plannerMarkdown(w func(string, ...any)) {
	h := b.cfg.hot
	if vs := b.variants("hot"); len(vs) > 0 {
		w("### Hot topic (one topic of %d carrying %.0f%% of the records, %d partitions each, tasks.max %d; a copy of %s records after the planner measured %d records/s)\n\n",
			h.topics, 100*h.share, h.perTopic, h.tasks, thousands(float64(h.records)), h.settleRate)
		w("Medians of the runs that did not fail; records/s between 10%% and 90%% of the copy. hot topic on: the tasks holding the hot topic's partitions when the copy started.\n\n")
		w("| assignment | records/s (median) | each run: records/s, hot topic on tasks, settled after s, partitions moved | creation → done s | CPU s/GB |\n|---|---:|---|---:|---:|\n")
		for _, v := range vs {
			m := b.find("hot", v, "kmirror")
			if m == nil {
				continue
			}
			var each []string
			for _, r := range b.results {
				if r.Scenario != "hot" || r.Variant != v || r.Planner == nil {
					continue
				}
				s := fmt.Sprintf("%s, %d tasks", thousands(r.RecordsPerS), r.Planner.HotTasks)
				if r.Planner.SettleS > 0 {
					s += fmt.Sprintf(", %.0f s", r.Planner.SettleS)
				}
				s += fmt.Sprintf(", %.0f moved", r.Planner.Moves)
				if r.Error != "" {
					s += " ⚠"
				}
				each = append(each, s)
			}
			w("| %s | %s | %s | %.1f | %.2f |\n", v, thousands(m.RecordsPerS), strings.Join(each, "; "), m.TotalS, m.CPUPerGB)
		}
		w("\n")
	}
	for _, r := range b.results {
		if r.Scenario != "skew" || r.Planner == nil {
			continue
		}
		w("### Skew (%s; %d topics of %d partitions, tasks.max %d, %d records/s of which %.0f%% on one topic, switched to another after %s)\n\n",
			r.Variant, b.cfg.skew.topics, h.perTopic, h.tasks, h.settleRate, 100*h.share, b.cfg.skew.phase)
		p := r.Planner
		w("- switch → first move of the new hot topic's partitions: %s; → its partitions on distinct tasks: %s; partitions moved in all: %.0f\n",
			seconds(p.FirstMoveS), seconds(p.FollowedS), p.Moves)
		if a := p.Audit; a != nil {
			w("- audit: %d records written, %d read on the target: missing %d, duplicated %d (%d of them in partitions the planner moved), reordered %d; pipeline restarts in kmirror's log (each may write again what it had in flight): %d\n",
				a.Written, a.Read, a.Missing, a.Duplicated, p.DuplicatedMoved, a.Reordered, p.PipelineRestarts)
		}
		if r.Error != "" {
			w("- ⚠ %s\n", r.Error)
		}
		w("\n")
	}
}

// pgMarkdown writes the pgload scenario's counts.
func (b *bench) pgMarkdown(w func(string, ...any)) {
	for _, r := range b.results {
		if r.Scenario != "pgload" || r.PG == nil {
			continue
		}
		p := r.PG
		w("### PostgreSQL under %d workers (%d connectors, %d tasks, %d partitions, %d records/s offered; counted over %.0f s)\n\n",
			p.Workers, p.Connectors, p.Tasks, p.Partitions, b.cfg.pg.rate, p.WindowS)
		w("- statements/s (pg_stat_statements): %.0f; commits/s: %.0f; rows written/s: %.0f; PostgreSQL CPU: %.2f cores; replicated meanwhile: %.0f records/s\n",
			p.StatementsPerS, p.CommitsPerS, p.RowsWrittenPS, p.PostgresCores, p.ReplicatedPerS)
		for _, t := range p.Top {
			w("  - %s\n", t)
		}
		if r.Error != "" {
			w("- ⚠ %s\n", r.Error)
		}
		w("\n")
	}
}

func seconds(s float64) string {
	if s < 0 {
		return "not seen"
	}
	return fmt.Sprintf("%.0f s", s)
}

// plannerGoals checks the hot and skew scenarios against the assignment's goals: by load, records/s within
// 10% of MM2's spread and at least 2× the grouped deal without moves; the planner following a moved load
// within two minutes with no duplicates.
func (b *bench) plannerGoals() []string {
	var out []string
	vs := b.assignmentVariants()
	d, n, s := b.find("hot", vs[0].name, "kmirror"), b.find("hot", vs[1].name, "kmirror"), b.find("hot", vs[2].name, "kmirror")
	if d != nil && n != nil && s != nil && d.RecordsPerS > 0 && n.RecordsPerS > 0 && s.RecordsPerS > 0 {
		out = append(out, fmt.Sprintf("hot: the default within 10%% of MM2's spread: %.2f× — %s; ≥ 2× grouped without moves: %.2f× — %s",
			d.RecordsPerS/s.RecordsPerS, metOrNot(d.RecordsPerS >= 0.9*s.RecordsPerS), d.RecordsPerS/n.RecordsPerS, metOrNot(d.RecordsPerS >= 2*n.RecordsPerS)))
	}
	for _, r := range b.results {
		if r.Scenario == "skew" && r.Planner != nil && r.Planner.Audit != nil {
			p := r.Planner
			out = append(out, fmt.Sprintf("skew: the planner follows within two minutes: %s — %s; 0 duplicates: %d (%d in moved partitions, %d pipeline restarts) — %s", seconds(p.FirstMoveS),
				metOrNot(p.FirstMoveS >= 0 && p.FirstMoveS <= 120), p.Audit.Duplicated, p.DuplicatedMoved, p.PipelineRestarts, metOrNot(p.Audit.Duplicated == 0 && p.Audit.Missing == 0)))
		}
	}
	return out
}
