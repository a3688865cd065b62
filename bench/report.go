package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
)

// environment describes the machine and the software a run measured.
func environment(b *bench) map[string]string {
	env := map[string]string{
		"date":       time.Now().UTC().Format(time.RFC3339),
		"cores":      fmt.Sprint(runtime.NumCPU()),
		"go":         runtime.Version(),
		"librdkafka": kafkabench.LibraryVersion(),
		"kafka":      "4.1.1 (Maven Central jars, scripts/harness: one KRaft broker per cluster)",
	}
	if bs, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(bs), "\n") {
			if v, ok := strings.CutPrefix(l, "model name"); ok {
				env["cpu"] = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(v), ":"))
				break
			}
		}
	}
	if kb, err := kbFields("/proc/meminfo", "MemTotal"); err == nil {
		env["memory"] = fmt.Sprintf("%.1f GiB", float64(kb["MemTotal"])/(1<<20))
	}
	if out, err := exec.Command("uname", "-sr").Output(); err == nil {
		env["kernel"] = strings.TrimSpace(string(out))
	}
	if out, err := exec.Command("java", "-version").CombinedOutput(); err == nil {
		env["java"] = strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0]
	}
	cmd := exec.Command("git", "rev-parse", "--short", "HEAD")
	cmd.Dir = b.repo
	if out, err := cmd.Output(); err == nil {
		env["kmirror_commit"] = strings.TrimSpace(string(out))
		// Uncommitted changes to the product (the benchmark's own files do not count).
		st := exec.Command("git", "status", "--porcelain", "--untracked-files=no", "--", ".",
			":!bench", ":!connectors/kafka/kafkabench", ":!docs/benchmarks.md", ":!Makefile")
		st.Dir = b.repo
		if o, err := st.Output(); err == nil && len(strings.TrimSpace(string(o))) > 0 {
			env["kmirror_commit"] += " (with uncommitted changes)"
			env["kmirror_uncommitted"] = strings.Join(strings.Fields(string(o)), " ")
		}
	}
	if l, err := os.ReadFile("/proc/loadavg"); err == nil {
		env["loadavg_at_start"] = strings.Join(strings.Fields(string(l))[:3], " ")
	}
	env[envCalibrationStart] = calibrationMs(cpuCalibration())
	return env
}

type report struct {
	Environment map[string]string `json:"environment"`
	Command     string            `json:"command"`
	Settings    map[string]any    `json:"settings"`
	Summary     []*result         `json:"summary"` // what the tables show: medians over repetitions
	Results     []*result         `json:"results"` // every run
	Goals       []string          `json:"goals"`
	Failures    []string          `json:"failures,omitempty"`
	DurationS   float64           `json:"duration_s"`
}

func (b *bench) settings() map[string]any {
	s := map[string]any{
		"records": b.cfg.records, "record_bytes": b.cfg.size, "partitions": b.cfg.partitions, "compression": b.cfg.compression,
		"producer": b.prodSettings(b.cfg.linger, b.cfg.batchSize), "small_batches": map[string]int{"linger.ms": b.cfg.smallLinger, "batch.size": b.cfg.smallBatch},
		"latency_rate": b.cfg.latencyRate, "latency_seconds": b.cfg.latencyFor.Seconds(), "refresh.topics.interval.seconds": b.cfg.refresh,
		"scenario_tasks_max": b.cfg.tasks, "many_topics": b.cfg.manyTopics, "many_partitions_per_topic": b.cfg.manyPartitions,
		"scale_topics": b.cfg.scaleTopics, "scale_partitions_per_topic": b.cfg.scalePartitions,
		"many_records_per_partition": b.cfg.manyRecords, "consumer": b.cfg.consumerJava(),
	}
	if b.a != "" {
		f := flow{alias: "P", filter: []string{"src"}, tasks: 1, prod: b.prodSettings(b.cfg.linger, b.cfg.batchSize), refresh: b.cfg.refresh}
		if c, p, err := b.pipeProps(f); err == nil {
			s["librdkafka_consumer_properties"] = c
			s["librdkafka_producer_properties"] = p
		}
	}
	return s
}

func (b *bench) report() error {
	b.rows = b.summarize()
	b.env[envCalibrationEnd] = calibrationMs(cpuCalibration())
	rep := report{Environment: b.env, Command: strings.Join(b.args, " "), Settings: b.settings(), Summary: b.rows,
		Results: b.results, Failures: b.failures, DurationS: time.Since(b.started).Seconds()}
	md := b.markdown(&rep)
	js, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.out, "results.json"), js, 0o644); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Print(md)
	fmt.Printf("\nJSON: %s\nmarkdown: %s\n", filepath.Join(b.out, "results.json"), filepath.Join(b.out, "results.md"))
	if len(b.failures) > 0 {
		return fmt.Errorf("%d run(s) failed", len(b.failures))
	}
	return nil
}

var (
	systemOrder = []string{"cpipe", "pipe", "kmirror", "candidate", "mm2", "mm2-wan"}
	systemNames = map[string]string{"cpipe": "(0) C pipe", "mm2-wan": "(c′) Java MM2, WAN profile", "pipe": "(a) librdkafka pipe", "kmirror": "(b) kmirror", "candidate": "(b′) kmirror candidate", "mm2": "(c) Java MM2"}
)

// cell formats v with its ratio to the pipe's value.
func cell(v, base float64, format string) string {
	if v <= 0 {
		return "—"
	}
	s := fmt.Sprintf(format, v)
	if base > 0 {
		s += fmt.Sprintf(" (%.2f×)", v/base)
	}
	return s
}

func thousands(v float64) string {
	n := int64(v + 0.5)
	s := fmt.Sprint(n)
	var out []byte
	for i, c := range []byte(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, c)
	}
	return string(out)
}

func (b *bench) find(scenario, variant, system string) *result {
	for _, r := range b.rows {
		if r.Scenario == scenario && r.Variant == variant && r.System == system {
			return r
		}
	}
	return nil
}

// systemResult is one system's result of a scenario variant, with the name its table row shows.
type systemResult struct {
	sys, name string
	r         *result
}

// systemResults are the results of scenario sc, variant v, in systemOrder, each named as the tables name it:
// marked ⚠ when the run failed.
func (b *bench) systemResults(sc, v string) []systemResult {
	var out []systemResult
	for _, sys := range systemOrder {
		if r := b.find(sc, v, sys); r != nil {
			name := systemNames[sys]
			if r.Error != "" {
				name += " ⚠"
			}
			out = append(out, systemResult{sys, name, r})
		}
	}
	return out
}

// baseline is the row every figure of a variant is a ratio to: the C pipe, the floor, when it ran (and did
// not fail), else the Go pipe.
func (b *bench) baseline(scenario, variant string) result {
	for _, sys := range []string{"cpipe", "pipe"} {
		if r := b.find(scenario, variant, sys); r != nil && r.Error == "" {
			return *r
		}
	}
	return result{}
}

// baselineName names the systems the ratios of a table are to.
func (b *bench) baselineName() string {
	if contains(b.cfg.systems, "cpipe") {
		return "(0), the C pipe (the Go pipe where the C pipe did not run)"
	}
	return "(a), the bare librdkafka pipe"
}

func (b *bench) variants(scenario string) []string {
	var out []string
	for _, r := range b.rows {
		if r.Scenario == scenario && !contains(out, r.Variant) {
			out = append(out, r.Variant)
		}
	}
	return out
}

func (b *bench) markdown(rep *report) string {
	var s strings.Builder
	w := func(format string, args ...any) { fmt.Fprintf(&s, format, args...) }
	w("## Results\n\n")
	w("Machine: %s, %s cores, %s, %s; %s; Go %s, librdkafka %s; Kafka %s.\n\n", rep.Environment["cpu"], rep.Environment["cores"],
		rep.Environment["memory"], rep.Environment["kernel"], rep.Environment["java"], strings.TrimPrefix(rep.Environment["go"], "go"),
		rep.Environment["librdkafka"], rep.Environment["kafka"])
	w("Machine speed: a fixed single-threaded JSON decode (bench/calibrate.go, fastest of %d; lower is faster) took %s ms at the start, %s before the runs and %s ms at the end. Figures of different days compare only at similar speeds.\n\n",
		calibrationRounds, rep.Environment[envCalibrationStart], b.calibrationRange(), rep.Environment[envCalibrationEnd])
	w("Run %s, kmirror %s, `%s`, %.0f min.\n\n", rep.Environment["date"], rep.Environment["kmirror_commit"], rep.Command, rep.DurationS/60)
	p := b.prodSettings(b.cfg.linger, b.cfg.batchSize)
	w("Records of %d bytes, compression %s; every system's replication producer: acks=%s, enable.idempotence=%s, max.in.flight.requests.per.connection=%s, linger.ms=%s, batch.size=%s (unless the row says otherwise)",
		b.cfg.size, b.cfg.compression, p.Acks, p.Idempotence, p.InFlight, p.Linger, p.BatchSize)
	for k, v := range p.Extra {
		w(", %s=%s", k, v)
	}
	if b.cfg.consumer != "" {
		w("; source consumers: %s", b.cfg.consumer)
	}
	if b.cfg.kmirrorExtra != "" {
		w("; kmirror only: %s", b.cfg.kmirrorExtra)
	}
	if b.cfg.mm2Extra != "" {
		w("; MM2 only: %s", b.cfg.mm2Extra)
	}
	w(".\n\n")

	type sv struct{ scenario, variant string }
	var tp []sv
	for _, sc := range []string{"tasks", "small", "compression"} {
		for _, v := range b.variants(sc) {
			tp = append(tp, sv{sc, v})
		}
	}
	if len(tp) > 0 {
		w("### Throughput (%s records, %d partitions; small batches: %s records)\n\n", thousands(float64(b.cfg.records)), b.cfg.partitions, thousands(float64(b.cfg.smallRecords)))
		w("Medians of %d interleaved runs per system (peak RSS: the highest). Ratios in parentheses are to %s. records/s, MB/s (10^6 value bytes) and CPU s/GB (process CPU per 10^9 value bytes) are measured in the steady state, between 10%% and 90%% of the records on the target; creation → done includes start-up (for MM2, the JVM's). Latency: %d records/s offered for %.0f s after each bulk copy (after a 3 s warm-up), send to receive on B; percentiles over all runs' records together. brokers CPU: A and B together (and the WAN broker W in the wan scenario), per GB and in cores (CPU s per s, steady state). PostgreSQL CPU: the harness's PostgreSQL, where kmirror commits its progress, per GB (not in kmirror's own CPU s/GB; add it for kmirror's whole cost). other CPU: processes outside the test on the machine, %% of all cores.\n\n",
			b.cfg.repeat, b.baselineName(), b.cfg.latencyRate, b.cfg.latencyFor.Seconds())
		w("| scenario | system | tasks | records/s | MB/s | CPU s/GB | peak RSS MB | latency p50 ms | latency p99 ms | creation → done s | brokers CPU s/GB | brokers cores | PostgreSQL CPU s/GB | other CPU %% |\n")
		w("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
		for _, x := range tp {
			sc, v := x.scenario, x.variant
			bp := b.baseline(sc, v)
			for _, x := range b.systemResults(sc, v) {
				r, name := x.r, x.name
				if r.OtherCPUPct >= 10 {
					name += " (noisy: other load)"
				}
				db := "—" // only kmirror keeps its state in PostgreSQL
				if x.sys == "kmirror" || x.sys == "candidate" {
					db = fmt.Sprintf("%.2f", r.DBCPUGB)
				}
				w("| %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %.0f |\n", v, name, r.TasksRunning,
					cellInt(r.RecordsPerS, bp.RecordsPerS), cell(r.MBPerS, bp.MBPerS, "%.1f"), cell(r.CPUPerGB, bp.CPUPerGB, "%.2f"),
					cell(r.PeakRSSMB, bp.PeakRSSMB, "%.0f"), cell(r.LatP50Ms, bp.LatP50Ms, "%.1f"), cell(r.LatP99Ms, bp.LatP99Ms, "%.1f"),
					cell(r.TotalS, bp.TotalS, "%.1f"), fmt.Sprintf("%.2f", r.BrokerCPUGB), r.BrokerCores, db, max(0, r.OtherCPUPct))
			}
		}
		w("\n")
	}

	b.wanMarkdown(w)

	for _, sc := range []string{"partitions", "scale"} {
		pv := b.variants(sc)
		if len(pv) == 0 {
			continue
		}
		title := "Many partitions"
		if sc == "scale" {
			title = "Scale"
		}
		w("### %s (tasks.max=%d, %d records per partition)\n\n", title, b.cfg.tasks, b.cfg.manyRecords)
		w("| scenario | system | creation → first record on B s | creation → every partition replicated s | peak RSS MB | RSS per 1,000 partitions MB | CPU s (creation → done) |\n")
		w("|---|---|---:|---:|---:|---:|---:|\n")
		for _, v := range pv {
			bp := b.baseline(sc, v)
			for _, x := range b.systemResults(sc, v) {
				r, name := x.r, x.name
				per := "—"
				if r.RSSPer1000 != 0 {
					per = cell(r.RSSPer1000, bp.RSSPer1000, "%.0f")
				}
				w("| %s | %s | %s | %s | %s | %s | %s |\n", v, name, cell(r.StartupS, bp.StartupS, "%.1f"), cell(r.TotalS, bp.TotalS, "%.1f"), cell(r.PeakRSSMB, bp.PeakRSSMB, "%.0f"),
					per, cell(r.CPUTotalS, bp.CPUTotalS, "%.1f"))
			}
		}
		w("\n")
	}

	if nv := b.variants("newtopic"); len(nv) > 0 {
		w("### Topic created mid-run (tasks.max=%d; a new topic of %d partitions and %s records, %d times one after the other; medians)\n\n",
			b.cfg.tasks, b.cfg.partitions, thousands(float64(b.cfg.partitions*1000)), b.cfg.repeat)
		w("| scenario | system | creation → first record on B s | creation → all records on B s | each |\n|---|---|---:|---:|---|\n")
		for _, v := range nv {
			for _, x := range b.systemResults("newtopic", v) {
				r, name := x.r, x.name
				var each []string
				for _, d := range r.NewDoneAll {
					each = append(each, fmt.Sprintf("%.1f", d))
				}
				w("| %s | %s | %s | %s | %s |\n", v, name, cell(r.NewFirstS, 0, "%.1f"), cell(r.NewDoneS, 0, "%.1f"), strings.Join(each, ", "))
			}
		}
		w("\n")
	}

	b.checkpointsMarkdown(w)
	b.plannerMarkdown(w)
	b.pgMarkdown(w)

	rep.Goals = b.goals()
	if len(rep.Goals) > 0 {
		w("### Goals\n\n")
		for _, g := range rep.Goals {
			w("- %s\n", g)
		}
		w("\n")
	}
	if len(b.failures) > 0 {
		w("### Failed runs (⚠)\n\n")
		for _, f := range b.failures {
			w("- %s\n", strings.ReplaceAll(f, "\n", " "))
		}
		w("\n")
	}
	var stats []string
	for _, r := range b.results {
		if r.StatsSummary != "" && r.Rep == 0 {
			stats = append(stats, fmt.Sprintf("- %s / pipe: %s", r.Variant, r.StatsSummary))
		}
	}
	if len(stats) > 0 {
		w("### librdkafka statistics of the pipe (same client properties as kmirror's)\n\n%s\n\n", strings.Join(stats, "\n"))
	}
	return s.String()
}

func cellInt(v, base float64) string {
	if v <= 0 {
		return "—"
	}
	s := thousands(v)
	if base > 0 {
		s += fmt.Sprintf(" (%.2f×)", v/base)
	}
	return s
}

// goals checks kmirror against issue 15's targets, per throughput variant: against the C pipe (≥ 90% of its
// records/s, CPU within 0.3 s/GB of it) when it ran, else against the Go pipe (≥ 90%); against MM2 (≥ 2× its
// records/s, ≤ 0.4× its CPU/GB, ≤ 0.15× its peak RSS; small batches ≥ 3× its records/s).
func (b *bench) goals() []string {
	var out []string
	check := metOrNot
	for _, sc := range []string{"tasks", "small", "compression"} {
		for _, v := range b.variants(sc) {
			k, p, c, m := b.find(sc, v, "kmirror"), b.find(sc, v, "pipe"), b.find(sc, v, "cpipe"), b.find(sc, v, "mm2")
			if k == nil || k.RecordsPerS == 0 {
				continue
			}
			if c != nil && c.RecordsPerS > 0 {
				out = append(out, fmt.Sprintf("%s: kmirror ≥ 90%% of the C pipe's records/s: %.0f%% — %s; CPU within 0.3 s/GB of it: %+.2f — %s", v,
					100*k.RecordsPerS/c.RecordsPerS, check(k.RecordsPerS >= 0.9*c.RecordsPerS), k.CPUPerGB-c.CPUPerGB, check(k.CPUPerGB-c.CPUPerGB <= 0.3)))
			} else if p != nil && p.RecordsPerS > 0 {
				out = append(out, fmt.Sprintf("%s: kmirror at ≥ 90%% of the Go pipe's throughput: %.0f%% — %s", v, 100*k.RecordsPerS/p.RecordsPerS, check(k.RecordsPerS >= 0.9*p.RecordsPerS)))
			}
			if m != nil && m.RecordsPerS > 0 {
				want := 2.0
				if sc == "small" {
					want = 3
				}
				out = append(out, fmt.Sprintf("%s: kmirror ≥ %.0f× MM2's records/s: %.2f× — %s; CPU/GB ≤ 0.4× MM2's: %.2f× — %s; peak RSS ≤ 0.15× MM2's: %.2f× — %s", v, want,
					k.RecordsPerS/m.RecordsPerS, check(k.RecordsPerS >= want*m.RecordsPerS),
					k.CPUPerGB/m.CPUPerGB, check(k.CPUPerGB <= 0.4*m.CPUPerGB),
					k.PeakRSSMB/m.PeakRSSMB, check(k.PeakRSSMB <= 0.15*m.PeakRSSMB)))
			}
		}
	}
	out = append(out, b.scaleGoals()...)
	out = append(out, b.wanGoals()...)
	out = append(out, b.plannerGoals()...)
	return append(out, b.checkpointGoals()...)
}

// summarizeStats condenses the pipe's librdkafka statistics up to until (the end of the bulk copy): per
// Produce request, how many records and bytes (from the cumulative counters of each producer's last
// statistics event), the last window's producer queue latency and broker round-trip, and per Fetch request
// how many records.
func summarizeStats(path string, until time.Time) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	type broker struct {
		Tx     int64                         `json:"tx"`
		Req    map[string]int64              `json:"req"`
		IntLat struct{ Avg, P99, Cnt int64 } `json:"int_latency"`
		Rtt    struct{ Avg, P99, Cnt int64 } `json:"rtt"`
		Nodeid int                           `json:"nodeid"`
	}
	type stats struct {
		Time       int64             `json:"time"`
		Txmsgs     int64             `json:"txmsgs"`
		TxmsgBytes int64             `json:"txmsg_bytes"`
		Rxmsgs     int64             `json:"rxmsgs"`
		MsgCnt     int64             `json:"msg_cnt"`
		Brokers    map[string]broker `json:"brokers"`
		Topics     map[string]struct {
			Batchsize struct{ Avg int64 } `json:"batchsize"`
			Batchcnt  struct{ Avg int64 } `json:"batchcnt"`
		} `json:"topics"`
	}
	last := map[string]stats{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			Worker int    `json:"worker"`
			Role   string `json:"role"`
			Stats  stats  `json:"stats"`
		}
		if json.Unmarshal(sc.Bytes(), &line) == nil && line.Stats.Time <= until.Unix()+1 {
			last[fmt.Sprintf("%s-%d", line.Role, line.Worker)] = line.Stats
		}
	}
	var txmsgs, txbytes, produceReqs, rxmsgs, fetchReqs, intLat, rtt, n, batchCnt, batchSize, nb int64
	keys := make([]string, 0, len(last))
	for k := range last {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		st := last[k]
		if strings.HasPrefix(k, "producer") {
			txmsgs += st.Txmsgs
			txbytes += st.TxmsgBytes
			for _, br := range st.Brokers {
				if br.Nodeid < 0 {
					continue
				}
				produceReqs += br.Req["Produce"]
				if br.Rtt.Cnt > 0 && br.IntLat.Cnt > 0 {
					intLat += br.IntLat.Avg
					rtt += br.Rtt.Avg
					n++
				}
			}
			for _, t := range st.Topics {
				if t.Batchcnt.Avg > 0 {
					batchCnt += t.Batchcnt.Avg
					batchSize += t.Batchsize.Avg
					nb++
				}
			}
		} else {
			rxmsgs += st.Rxmsgs
			for _, br := range st.Brokers {
				if br.Nodeid >= 0 {
					fetchReqs += br.Req["Fetch"]
				}
			}
		}
	}
	if produceReqs == 0 {
		return ""
	}
	s := fmt.Sprintf("%.0f records and %.0f KiB per Produce request", float64(txmsgs)/float64(produceReqs), float64(txbytes)/1024/float64(produceReqs))
	if n > 0 {
		s += fmt.Sprintf("; producer queue latency %.1f ms, Produce RTT %.1f ms (last window)", float64(intLat)/float64(n)/1000, float64(rtt)/float64(n)/1000)
	}
	if nb > 0 {
		s += fmt.Sprintf("; batches of %.0f records / %.0f KiB", float64(batchCnt)/float64(nb), float64(batchSize)/float64(nb)/1024)
	}
	if fetchReqs > 0 {
		s += fmt.Sprintf("; %.0f records per Fetch request", float64(rxmsgs)/float64(fetchReqs))
	}
	return s
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// throughputScenarios are summarised as medians over their repetitions.
var throughputScenarios = []string{"tasks", "small", "compression", "wan", "hot"}

// summarize turns the runs into the rows of the tables: for the throughput scenarios, per scenario variant
// and system, the median of each figure over the successful repetitions (peak RSS: the highest; latency:
// the first repetition's); the other scenarios' runs as they are.
func (b *bench) summarize() []*result {
	var rows []*result
	type key struct{ scenario, variant, system string }
	groups := map[key][]*result{}
	var order []key
	for _, r := range b.results {
		if !slices.Contains(throughputScenarios, r.Scenario) {
			rows = append(rows, r)
			continue
		}
		k := key{r.Scenario, r.Variant, r.System}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	var sums []*result
	for _, k := range order {
		runs := groups[k]
		s := *runs[0]
		s.Rep, s.Samples, s.ThreadCPU, s.CPUProfile, s.HeapProfile, s.StatsSummary = -1, nil, nil, "", "", ""
		var ok []*result
		for _, r := range runs {
			if r.Error == "" && r.RecordsPerS > 0 {
				ok = append(ok, r)
			}
		}
		s.Runs = len(ok)
		if len(ok) == 0 {
			s.Error = runs[0].Error
			sums = append(sums, &s)
			continue
		}
		s.Error = ""
		if len(ok) < len(runs) {
			s.Error = fmt.Sprintf("%d of %d runs failed", len(runs)-len(ok), len(runs))
		}
		m := func(f func(*result) float64) float64 {
			var v []float64
			for _, r := range ok {
				v = append(v, f(r))
			}
			return median(v)
		}
		s.RecordsPerS = m(func(r *result) float64 { return r.RecordsPerS })
		s.MBPerS = m(func(r *result) float64 { return r.MBPerS })
		s.CPUPerGB = m(func(r *result) float64 { return r.CPUPerGB })
		s.BrokerCPUGB = m(func(r *result) float64 { return r.BrokerCPUGB })
		s.BrokerCores = m(func(r *result) float64 { return r.BrokerCores })
		s.LinkCores = m(func(r *result) float64 { return r.LinkCores })
		s.DBCPUGB = m(func(r *result) float64 { return r.DBCPUGB })
		s.CalibrationMs = m(func(r *result) float64 { return r.CalibrationMs })
		s.OtherCPUPct = m(func(r *result) float64 { return r.OtherCPUPct })
		s.TotalS = m(func(r *result) float64 { return r.TotalS })
		s.StartupS = m(func(r *result) float64 { return r.StartupS })
		s.WindowS = m(func(r *result) float64 { return r.WindowS })
		s.CPUTotalS = m(func(r *result) float64 { return r.CPUTotalS })
		s.PeakRSSMB = 0
		var lat []time.Duration
		for _, r := range runs {
			s.PeakRSSMB = max(s.PeakRSSMB, r.PeakRSSMB)
			lat = append(lat, r.Latencies...)
		}
		// Latency: the percentiles of every run's measurements together.
		if len(lat) > 0 {
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			s.LatP50Ms, s.LatP99Ms = percentile(lat, 0.50), percentile(lat, 0.99)
			s.LatMaxMs = float64(lat[len(lat)-1]) / float64(time.Millisecond)
			s.LatSent, s.LatReceived = 0, 0
			for _, r := range runs {
				s.LatSent += r.LatSent
				s.LatReceived += r.LatReceived
			}
		}
		s.Alias = ""
		sums = append(sums, &s)
	}
	return append(sums, rows...)
}

// scaleGoals checks kmirror's scale run against the scale targets: every partition replicated within 15 s of
// the connector's creation, at most 35 MB of RSS per 1,000 partitions.
func (b *bench) scaleGoals() []string {
	var out []string
	for _, v := range b.variants("scale") {
		k := b.find("scale", v, "kmirror")
		if k == nil || k.RSSPer1000 == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("scale, %s: kmirror replicates every partition within 15 s of creation: %.1f s — %s; RSS per 1,000 partitions ≤ 35 MB: %.0f MB — %s",
			v, k.TotalS, metOrNot(k.Done && k.TotalS <= 15), k.RSSPer1000, metOrNot(k.RSSPer1000 <= 35)))
	}
	return out
}
