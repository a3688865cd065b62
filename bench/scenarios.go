package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
)

const sampleEvery = 200 * time.Millisecond

func (b *bench) sourceTopic(records int64) string {
	return fmt.Sprintf("src-%dp-%db-%s-%d", b.cfg.partitions, b.cfg.size, b.cfg.compression, records)
}

// scenarios are what -scenarios may name, each with what runs it.
var scenarios = map[string]func(*bench, context.Context) error{
	"tasks":       (*bench).scenarioTasks,
	"small":       (*bench).scenarioSmall,
	"partitions":  (*bench).scenarioPartitions,
	"scale":       (*bench).scenarioScale,
	"newtopic":    (*bench).scenarioNewTopic,
	"checkpoints": (*bench).scenarioCheckpoints,
	"wan":         (*bench).scenarioWan,
	"compression": (*bench).scenarioCompression,
	"hot":         (*bench).scenarioHot,
	"skew":        (*bench).scenarioSkew,
	"pgload":      (*bench).scenarioPGLoad,
}

// scenarioTasks: tasks.max 1, 4, 8 over the source topic's partitions.
func (b *bench) scenarioTasks(ctx context.Context) error {
	src := b.sourceTopic(b.cfg.records)
	if err := b.ensureLoaded(ctx, map[string]int{src: b.cfg.partitions}, b.cfg.records); err != nil {
		return err
	}
	b.warmUp(ctx, src)
	for _, t := range b.cfg.tasksList {
		variant := fmt.Sprintf("tasks.max=%d", t)
		for rep := range b.cfg.repeat {
			for _, s := range b.runOrder(rep) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				b.throughputRun(ctx, s, "tasks", variant, fmt.Sprintf("t%d", t), src, t, b.cfg.linger, b.cfg.batchSize, rep)
			}
		}
	}
	return nil
}

// warmUp replicates src with the first system, unmeasured, before the first measured run. Without it the
// first round of runs met brokers whose JVMs had not compiled their fetch and produce paths yet: every system's
// first run was 30-60% slower than its next ones, and the median of three carried that.
func (b *bench) warmUp(ctx context.Context, src string) {
	systems := b.systems()
	if b.warmedUp || len(systems) == 0 {
		return
	}
	b.warmedUp = true
	for i := range b.cfg.warmup {
		if ctx.Err() != nil {
			return
		}
		b.throughputRun(ctx, systems[0], "warmup", "warm-up", "w", src, b.cfg.tasks, b.cfg.linger, b.cfg.batchSize, i)
	}
}

// scenarioCompression: the tasks scenario's source data produced compressed with each codec, and every
// system's replication producer compressing with the same codec (issue 15, item 6). The codec is the run's
// only difference from the tasks scenario at -compression-tasks.
func (b *bench) scenarioCompression(ctx context.Context) error {
	saved := b.cfg.compression
	defer func() { b.cfg.compression = saved }()
	for _, codec := range b.cfg.codecs {
		b.cfg.compression = codec
		src := b.sourceTopic(b.cfg.records)
		if err := b.ensureLoaded(ctx, map[string]int{src: b.cfg.partitions}, b.cfg.records); err != nil {
			return err
		}
		b.warmUp(ctx, src)
		variant := fmt.Sprintf("compression.type=%s, tasks.max=%d", codec, b.cfg.codecTasks)
		for rep := range b.cfg.repeat {
			for _, s := range b.runOrder(rep) {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				b.throughputRun(ctx, s, "compression", variant, "z"+codec[:1], src, b.cfg.codecTasks, b.cfg.linger, b.cfg.batchSize, rep)
			}
		}
	}
	return nil
}

// scenarioSmall: small batches (linger.ms 0, 5 KiB batches).
func (b *bench) scenarioSmall(ctx context.Context) error {
	src := b.sourceTopic(b.cfg.smallRecords)
	if err := b.ensureLoaded(ctx, map[string]int{src: b.cfg.partitions}, b.cfg.smallRecords); err != nil {
		return err
	}
	b.warmUp(ctx, src)
	variant := fmt.Sprintf("small batches: linger.ms=%d batch.size=%d, tasks.max=%d", b.cfg.smallLinger, b.cfg.smallBatch, b.cfg.tasks)
	for rep := range b.cfg.repeat {
		for _, s := range b.runOrder(rep) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			b.throughputRun(ctx, s, "small", variant, "sb", src, b.cfg.tasks, b.cfg.smallLinger, b.cfg.smallBatch, rep)
		}
	}
	return nil
}

// throughputRun replicates the source topic src with system s, then (unless disabled) measures end-to-end
// latency at a fixed offered load on a topic of the run's own.
func (b *bench) throughputRun(ctx context.Context, s system, scenario, variant, code, src string, tasks, linger, batch, rep int) {
	alias := b.alias(s, code)
	r := &result{Scenario: scenario, Variant: variant, System: s.name(), Alias: alias, TasksMax: tasks,
		Partitions: b.cfg.partitions, Linger: linger, BatchSize: batch, Rep: rep}
	withLatency := b.cfg.latencyFor > 0
	defer func() { b.finish(r) }()
	defer b.cleanup(context.WithoutCancel(ctx), alias)

	topics := map[string]int{src: b.cfg.partitions}
	filter := []string{src}
	lat := "lat-" + alias
	if withLatency {
		if err := b.createTopics(ctx, b.adminA, map[string]int{lat: b.cfg.partitions}); err != nil {
			r.Error = err.Error()
			return
		}
		topics[lat] = b.cfg.partitions
		filter = append(filter, lat)
	}
	ends, err := b.adminA.EndOffsets(ctx, map[string]int{src: b.cfg.partitions})
	if err != nil {
		r.Error = err.Error()
		return
	}
	f := flow{alias: alias, filter: filter, topics: topics, tasks: tasks, prod: b.prodSettings(linger, batch), refresh: b.cfg.refresh}
	// A record takes its value and, in a batch of many, some tens of bytes of its own on disk.
	if err := b.waitRoom(ctx, sum(ends)*int64(b.cfg.size+64), roomWait); err != nil {
		r.Error = err.Error()
		return
	}
	inst, err := b.startMeasured(ctx, s, f, r)
	if err != nil {
		r.Error = err.Error()
		return
	}
	w := b.newWatcher(inst, f, ends)
	profDone := b.maybeProfile(w, inst, r, alias)
	err = w.waitDone(ctx, sampleEvery, b.cfg.maxRun)
	w.fill(r, b.cfg.size)
	b.saveSamples(alias, w.samples)
	if err == nil && withLatency {
		err = b.latency(ctx, r, lat, f.remote(lat), b.cfg.partitions)
	}
	if err != nil {
		r.Error = err.Error()
	}
	b.stopInstance(inst, r, alias, profDone)
	if s.name() == "pipe" && b.cfg.stats {
		until := time.Now()
		if w.doneT >= 0 {
			until = inst.t0.Add(time.Duration(w.doneT * float64(time.Second)))
		}
		r.StatsSummary = summarizeStats(filepath.Join(b.out, "stats", alias+".jsonl"), until)
	}
}

// startMeasured starts system s on flow f for the measured run r, once the machine is quiet and its speed is
// taken (r.CalibrationMs).
func (b *bench) startMeasured(ctx context.Context, s system, f flow, r *result) (*instance, error) {
	b.waitQuiet(ctx)
	r.CalibrationMs = cpuCalibration()
	logf("%s / %s / %s: starting (alias %s)", r.Scenario, r.Variant, r.System, r.Alias)
	return s.start(ctx, b, f, r.Alias)
}

// maybeProfile starts a CPU profile of a kmirror run when the first records arrive (with -pprof).
func (b *bench) maybeProfile(w *watcher, inst *instance, r *result, alias string) chan struct{} {
	done := make(chan struct{})
	if inst.pprofAddr == "" {
		close(done)
		return done
	}
	path := filepath.Join(b.out, "profiles", alias+".cpu.pprof")
	w.onFirst = func() {
		go func() {
			defer close(done)
			q := fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(b.cfg.profileFor.Seconds()))
			if err := b.saveProfile(inst.pprofAddr, q, path); err != nil {
				logf("cpu profile: %v", err)
				return
			}
			r.CPUProfile = path
		}()
	}
	return done
}

// stopInstance records the peak RSS (and a heap profile), then stops the system.
func (b *bench) stopInstance(inst *instance, r *result, alias string, profDone chan struct{}) {
	if inst.pprofAddr != "" {
		select {
		case <-profDone:
		case <-time.After(b.cfg.profileFor + 10*time.Second):
		}
		path := filepath.Join(b.out, "profiles", alias+".heap.pprof")
		if err := b.saveProfile(inst.pprofAddr, "/debug/pprof/heap", path); err == nil {
			r.HeapProfile = path
		}
		_ = b.saveProfile(inst.pprofAddr, "/debug/pprof/heap?debug=1", filepath.Join(b.out, "profiles", alias+".heap.txt"))
	}
	r.PeakRSSMB = peakRSSMB(inst.pid)
	if inst.tasks != nil {
		r.TasksRunning = inst.tasks()
	}
	// The process's memory picture at the end of the run, for the record.
	var proc []byte
	for _, f := range []string{"status", "smaps_rollup"} {
		if bs, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", inst.pid, f)); err == nil {
			proc = append(append(proc, "# /proc/PID/"+f+"\n"...), bs...)
		}
	}
	_ = os.WriteFile(filepath.Join(b.out, "logs", alias+".proc.txt"), proc, 0o644)
	if err := inst.stop(); err != nil {
		logf("stop %s: %v", r.System, err)
	}
}

func (b *bench) saveSamples(alias string, s []sample) {
	js, _ := json.Marshal(s)
	_ = os.WriteFile(filepath.Join(b.out, "logs", alias+".samples.json"), js, 0o644)
}

// record keeps r among the results (and its error among the failures) and says how it ended, for the log.
func (b *bench) record(r *result) (status string) {
	b.results = append(b.results, r)
	if r.Error == "" {
		return "ok"
	}
	b.failures = append(b.failures, fmt.Sprintf("%s / %s / %s: %s", r.Scenario, r.Variant, r.System, r.Error))
	return "ERROR: " + r.Error
}

func (b *bench) finish(r *result) {
	status := b.record(r)
	logf("%s / %s / %s: %.0f records/s, %.1f MB/s, %.2f CPU s/GB, peak RSS %.0f MB, latency p50 %.1f ms p99 %.1f ms, done in %.1f s (first record at %.1f s) — %s",
		r.Scenario, r.Variant, r.System, r.RecordsPerS, r.MBPerS, r.CPUPerGB, r.PeakRSSMB, r.LatP50Ms, r.LatP99Ms, r.TotalS, r.StartupS, status)
}

// scenarioPartitions: 1,000 partitions over 100 topics; first a 10-partition baseline run of each system, so
// that the memory of 1,000 partitions is the difference.
func (b *bench) scenarioPartitions(ctx context.Context) error {
	return b.manyPartitions(ctx, "partitions", "many-%03d", "p", b.cfg.manyTopics, b.cfg.manyPartitions)
}

// scenarioScale: issue 15's scale goal, 10,000 partitions over 1,000 topics replicating within 30 s of the
// connector's creation, at most 40 MB of RSS per 1,000 partitions. The same measurement as the partitions
// scenario, on topics of its own.
func (b *bench) scenarioScale(ctx context.Context) error {
	return b.manyPartitions(ctx, "scale", "scale-%04d", "s", b.cfg.scaleTopics, b.cfg.scalePartitions)
}

// manyPartitions replicates topics×perTopic partitions (names from the format pattern) with each system, after a
// baseline run of one topic of perTopic partitions, so that the memory of the partitions is the difference.
func (b *bench) manyPartitions(ctx context.Context, scenario, pattern, code string, topics, perTopic int) error {
	many := map[string]int{}
	for i := range topics {
		many[fmt.Sprintf(pattern, i)] = perTopic
	}
	few := map[string]int{"few-000": perTopic}
	nMany := topics * perTopic
	if err := b.ensureLoaded(ctx, many, int64(nMany*b.cfg.manyRecords)); err != nil {
		return err
	}
	if err := b.ensureLoaded(ctx, few, int64(perTopic*b.cfg.manyRecords)); err != nil {
		return err
	}
	prefix, _, _ := strings.Cut(pattern, "%")
	for i, s := range b.systems() {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if scenario == "scale" && i > 0 {
			// A broker keeps one file open per partition, deleted ones included for file.delete.delay.ms (60 s),
			// and the harness's brokers may open 20,000: two runs of 10,000 remote partitions on B within a
			// minute crashed it ("Too many open files").
			logf("scale: waiting 70 s for B to close the previous run's deleted partitions")
			if err := sleepCtx(ctx, 70*time.Second); err != nil {
				return err
			}
		}
		base := b.fillRun(ctx, s, scenario, fmt.Sprintf("%d partitions (baseline)", perTopic), code+"b", few, []string{"few-.*"}, false)
		variant := fmt.Sprintf("%d partitions over %d topics", nMany, topics)
		precreate := scenario == "scale" && b.cfg.scalePrecreate
		if precreate {
			variant += ", remote topics created beforehand"
		}
		r := b.fillRun(ctx, s, scenario, variant, code+"m", many, []string{regexp.QuoteMeta(prefix) + ".*"}, precreate)
		if base.Error == "" && r.Error == "" {
			r.BaselineRSS = base.PeakRSSMB
			r.RSSPer1000 = (r.PeakRSSMB - base.PeakRSSMB) * 1000 / float64(nMany-perTopic)
		}
	}
	return nil
}

// fillRun replicates topics and measures the time until every partition is replicated. With precreate the
// remote topics are created on B (and have leaders) before the system starts: the time is then the
// replicator's own, without the target broker's creation of thousands of partitions (which took it 40-120 s for
// 10,000 on this machine).
func (b *bench) fillRun(ctx context.Context, s system, scenario, variant, code string, topics map[string]int, filter []string, precreate bool) *result {
	alias := b.alias(s, code)
	n := 0
	for _, p := range topics {
		n += p
	}
	r := &result{Scenario: scenario, Variant: variant, System: s.name(), Alias: alias, TasksMax: b.cfg.tasks,
		Partitions: n, Linger: b.cfg.linger, BatchSize: b.cfg.batchSize}
	defer func() { b.finish(r) }()
	defer b.cleanup(context.WithoutCancel(ctx), alias)
	ends, err := b.adminA.EndOffsets(ctx, topics)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	f := flow{alias: alias, filter: filter, topics: topics, tasks: b.cfg.tasks, prod: b.prodSettings(b.cfg.linger, b.cfg.batchSize), refresh: b.cfg.refresh}
	if precreate {
		remote := make(map[string]int, len(topics))
		for t, n := range topics {
			remote[f.remote(t)] = n
		}
		t0 := time.Now()
		if err := b.createTopics(ctx, b.adminB, remote); err != nil {
			r.Error = err.Error()
			return r
		}
		if err := b.waitLeaders(ctx, b.adminB, remote); err != nil {
			r.Error = err.Error()
			return r
		}
		logf("%s / %s: created %d remote topics on B in %.1f s", scenario, variant, len(remote), time.Since(t0).Seconds())
	}
	inst, err := b.startMeasured(ctx, s, f, r)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	w := b.newWatcher(inst, f, ends)
	profDone := b.maybeHeapProfile(w, inst, alias)
	err = w.waitDone(ctx, 250*time.Millisecond, b.cfg.maxRun)
	w.fill(r, b.cfg.size)
	b.saveSamples(alias, w.samples)
	if err != nil {
		r.Error = err.Error()
	}
	b.stopInstance(inst, r, alias, profDone)
	return r
}

// maybeHeapProfile saves a heap profile of a kmirror run (with -pprof) while it replicates, half a second
// after the first records arrived: the end-of-run profile shows only what is left once everything is idle.
func (b *bench) maybeHeapProfile(w *watcher, inst *instance, alias string) chan struct{} {
	done := make(chan struct{})
	if inst.pprofAddr == "" {
		close(done)
		return done
	}
	w.onFirst = func() {
		go func() {
			defer close(done)
			time.Sleep(500 * time.Millisecond)
			if err := b.saveProfile(inst.pprofAddr, "/debug/pprof/heap", filepath.Join(b.out, "profiles", alias+".busy.heap.pprof")); err != nil {
				logf("heap profile: %v", err)
			}
		}()
	}
	return done
}

// loadEnds loads records into topics on A and returns their end offsets.
func (b *bench) loadEnds(ctx context.Context, topics map[string]int, records int64) (map[kafkabench.TP]int64, error) {
	if err := kafkabench.Load(ctx, kafkabench.LoadConfig{Bootstrap: b.a, Partitions: partitionsOf(topics), Records: records,
		Size: b.cfg.size, Compression: b.cfg.compression, Payload: b.payload}); err != nil {
		return nil, err
	}
	return b.adminA.EndOffsets(ctx, topics)
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// scenarioNewTopic: a topic created while the connector runs; the time from its creation until all its
// records are on the target. The pipes have no topic discovery, so they do not take part.
func (b *bench) scenarioNewTopic(ctx context.Context) error {
	for _, s := range b.systems() {
		if s.name() == "pipe" || s.name() == "cpipe" || ctx.Err() != nil {
			continue
		}
		b.newTopicRun(ctx, s)
	}
	return ctx.Err()
}

func (b *bench) newTopicRun(ctx context.Context, s system) {
	alias := b.alias(s, "nt")
	variant := fmt.Sprintf("topic created mid-run (refresh.topics.interval.seconds=%d)", b.cfg.refresh)
	r := &result{Scenario: "newtopic", Variant: variant, System: s.name(), Alias: alias, TasksMax: b.cfg.tasks,
		Partitions: b.cfg.partitions, Linger: b.cfg.linger, BatchSize: b.cfg.batchSize}
	defer func() { b.finish(r) }()
	defer b.cleanup(context.WithoutCancel(ctx), alias)
	base := map[string]int{"nt-" + alias + "-base": 1}
	if err := b.createTopics(ctx, b.adminA, base); err != nil {
		r.Error = err.Error()
		return
	}
	ends, err := b.loadEnds(ctx, base, 1000)
	if err != nil {
		r.Error = err.Error()
		return
	}
	f := flow{alias: alias, filter: []string{"nt-" + alias + "-.*"}, topics: base, tasks: b.cfg.tasks,
		prod: b.prodSettings(b.cfg.linger, b.cfg.batchSize), refresh: b.cfg.refresh}
	b.waitQuiet(ctx)
	logf("newtopic / %s: starting (alias %s)", s.name(), alias)
	inst, err := s.start(ctx, b, f, alias)
	if err != nil {
		r.Error = err.Error()
		return
	}
	defer b.stopInstance(inst, r, alias, closedChan())
	w := b.newWatcher(inst, f, ends)
	if err := w.waitDone(ctx, sampleEvery, b.cfg.maxRun); err != nil {
		r.Error = "existing topic: " + err.Error()
		return
	}
	r.StartupS, r.TotalS = w.firstT, w.doneT
	// One topic after the other, b.cfg.repeat times, each once the system has settled.
	var firsts, dones []float64
	for k := range b.cfg.repeat {
		time.Sleep(3 * time.Second)
		newT := map[string]int{fmt.Sprintf("nt-%s-new%d", alias, k): b.cfg.partitions}
		if err := b.createTopics(ctx, b.adminA, newT); err != nil {
			r.Error = err.Error()
			return
		}
		created := time.Now()
		records := int64(b.cfg.partitions * 1000)
		ends2, err := b.loadEnds(ctx, newT, records)
		if err != nil {
			r.Error = err.Error()
			return
		}
		in2 := *inst
		in2.t0 = created
		w2 := b.newWatcher(&in2, f, ends2)
		err = w2.waitDone(ctx, 100*time.Millisecond, 3*time.Minute)
		b.saveSamples(fmt.Sprintf("%s-new%d", alias, k), w2.samples)
		r.Records += records
		if err != nil {
			r.Error = "new topic: " + err.Error()
			return
		}
		firsts, dones = append(firsts, w2.firstT), append(dones, w2.doneT)
	}
	r.NewFirstS, r.NewDoneS = median(firsts), median(dones)
	r.NewDoneAll = dones
	r.Runs = len(dones)
	r.Done = true
}
