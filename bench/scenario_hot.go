package main

import (
	"context"
	"flag"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
)

// hotFlags configure the hot scenario: one topic carrying most of the bytes among many, replicated by
// kmirror under each assignment.
type hotFlags struct {
	topics, perTopic, tasks int
	share                   float64
	records                 int64
	sustainMs               int
	settleRate              int
	settleMax               time.Duration
}

func registerHotFlags(fs *flag.FlagSet, h *hotFlags) {
	fs.IntVar(&h.topics, "hot-topics", 50, "topics of the hot scenario (the first is the hot one)")
	fs.IntVar(&h.perTopic, "hot-partitions", 8, "partitions per topic of the hot scenario")
	fs.IntVar(&h.tasks, "hot-tasks", 8, "tasks.max of the hot and skew scenarios")
	fs.Float64Var(&h.share, "hot-share", 0.8, "share of the records (and bytes) the hot topic carries, in the hot and skew scenarios")
	fs.Int64Var(&h.records, "hot-records", 4_000_000, "records of the hot scenario's measured copy (a backlog loaded while the connector is paused)")
	fs.IntVar(&h.sustainMs, "hot-sustain-ms", mirrorconfig.DefaultTaskMovesSustainMs, "kmirror.task.moves.sustain.ms of the default assignment in the hot and skew scenarios")
	fs.IntVar(&h.settleRate, "hot-settle-rate", 5000, "records/s of the load the planner measures before the copy (hot) and of the skew scenario's load")
	fs.DurationVar(&h.settleMax, "hot-settle-max", 5*time.Minute, "hot: how long the default assignment may take to spread the hot topic before the copy")
}

// assignmentVariant is one way of dealing the partitions: the connector keys that choose it.
type assignmentVariant struct {
	name, code string
	extra      map[string]string
	moves      bool // the planner moves partitions by load
}

func (b *bench) assignmentVariants() []assignmentVariant {
	def := map[string]string{}
	if b.cfg.hot.sustainMs != mirrorconfig.DefaultTaskMovesSustainMs {
		def[mirrorconfig.TaskMovesSustainConfig] = strconv.Itoa(b.cfg.hot.sustainMs)
	}
	return []assignmentVariant{
		{name: "grouped + moves by load (default)", code: "hd", extra: def, moves: true},
		{name: "grouped, moves disabled", code: "hn", extra: map[string]string{mirrorconfig.TaskMovesEnabledConfig: "false"}},
		{name: "MM2 spread (partitions)", code: "hs", extra: map[string]string{mirrorconfig.TaskAssignmentConfig: mirrorconfig.TaskAssignmentPartitions}},
	}
}

// withConfig is kmirror with the connector keys of a variant added to -kmirror-config.
func withConfig(extra map[string]string) kmirrorSystem {
	k := kmirrorSys
	k.extra = func(b *bench) string {
		s := b.cfg.kmirrorExtra
		for key, v := range extra {
			s += "," + key + "=" + v
		}
		return s
	}
	return k
}

func describe(extra map[string]string) string {
	if len(extra) == 0 {
		return "(defaults)"
	}
	s := ""
	for k, v := range extra {
		if s != "" {
			s += ", "
		}
		s += k + "=" + v
	}
	return s
}

// scenarioHot: one topic carrying -hot-share of the bytes among -hot-topics, tasks.max -hot-tasks, under the
// default assignment (grouped, moves by load), grouped without moves, and MM2's spread (the best hand-made
// assignment here: every hot partition on a task of its own). Each run lets the planner measure a paced load
// first, until the hot topic is spread (default) or briefly (the others, whose deal never changes); then the
// connector is paused, a backlog loaded with the same shares, and the copy from the resume is measured.
func (b *bench) scenarioHot(ctx context.Context) error {
	vs := b.assignmentVariants()
	for rep := range b.cfg.repeat {
		for _, i := range williamsRow(len(vs), rep) {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			b.hotRun(ctx, vs[i], rep)
		}
	}
	return nil
}

func (b *bench) hotRun(ctx context.Context, v assignmentVariant, rep int) {
	h := b.cfg.hot
	sys := withConfig(v.extra)
	alias := b.alias(sys, v.code)
	topics := map[string]int{}
	var hot, cold []kafkabench.TP
	hotTopic := fmt.Sprintf("hot-%s-00", alias)
	for i := range h.topics {
		t := fmt.Sprintf("hot-%s-%02d", alias, i)
		topics[t] = h.perTopic
		for p := range h.perTopic {
			if i == 0 {
				hot = append(hot, kafkabench.TP{Topic: t, Partition: int32(p)})
			} else {
				cold = append(cold, kafkabench.TP{Topic: t, Partition: int32(p)})
			}
		}
	}
	r := &result{Scenario: "hot", Variant: v.name, System: "kmirror", Alias: alias, TasksMax: h.tasks,
		Partitions: len(hot) + len(cold), Linger: b.cfg.linger, BatchSize: b.cfg.batchSize, Rep: rep,
		Planner: &plannerFigures{Assignment: describe(v.extra), SettleS: -1}}
	defer func() { b.finish(r) }()
	defer b.cleanup(context.WithoutCancel(ctx), alias)
	fail := func(err error) { r.Error = err.Error() }
	if err := b.createTopics(ctx, b.adminA, topics); err != nil {
		fail(err)
		return
	}
	if err := b.waitLeaders(ctx, b.adminA, topics); err != nil {
		fail(err)
		return
	}
	f := flow{alias: alias, filter: []string{"hot-" + alias + "-.*"}, topics: topics, tasks: h.tasks,
		prod: b.prodSettings(b.cfg.linger, b.cfg.batchSize), refresh: b.cfg.refresh}
	b.waitQuiet(ctx)
	logf("hot / %s: starting (alias %s)", v.name, alias)
	inst, err := sys.start(ctx, b, f, alias)
	if err != nil {
		fail(err)
		return
	}
	defer b.stopInstance(inst, r, alias, closedChan())
	shares := weightedPartitions(hot, cold, h.share)
	var moves moveLogger

	// The settling load: the planner sees the hot topic's rates.
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := kafkabench.ProduceAtRate(loadCtx, kafkabench.RateConfig{Bootstrap: b.a, Partitions: shares, Rate: h.settleRate,
			Duration: h.settleMax + time.Minute, Size: b.cfg.size, Compression: b.cfg.compression, Payload: b.payload})
		if err != nil && loadCtx.Err() == nil {
			logf("hot: settling load: %v", err)
		}
	}()
	settle0 := time.Now()
	for {
		rep, err := partitionsReport(ctx, inst, f)
		if err == nil {
			moves.add(rep)
			n, complete := topicTasks(rep, hotTopic, len(hot))
			r.Planner.HotTasks = n
			el := time.Since(settle0)
			if complete && ((v.moves && n >= min(h.tasks, len(hot))) || (!v.moves && el >= 15*time.Second)) {
				if v.moves {
					r.Planner.SettleS = el.Seconds()
				}
				break
			}
		}
		if time.Since(settle0) > h.settleMax || ctx.Err() != nil {
			logf("hot / %s: the hot topic sits on %d tasks after %s; measuring as it is", v.name, r.Planner.HotTasks, h.settleMax)
			break
		}
		time.Sleep(2 * time.Second)
	}
	stopLoad()
	wg.Wait()
	if err := b.waitCaughtUp(ctx, f, topics, time.Minute); err != nil {
		fail(err)
		return
	}
	if err := connectorAction(ctx, inst, f, "pause", "PAUSED"); err != nil {
		fail(err)
		return
	}
	logf("hot / %s: paused with the hot topic on %d task(s); loading %d records", v.name, r.Planner.HotTasks, h.records)
	if err := kafkabench.Load(ctx, kafkabench.LoadConfig{Bootstrap: b.a, Partitions: shares, Records: h.records,
		Size: b.cfg.size, Compression: b.cfg.compression, Payload: b.payload}); err != nil {
		fail(err)
		return
	}
	ends, err := b.adminA.EndOffsets(ctx, topics)
	if err != nil {
		fail(err)
		return
	}
	base, err := b.replicated(ctx, f, ends)
	if err != nil {
		fail(err)
		return
	}
	b.waitQuiet(ctx)
	r.CalibrationMs = cpuCalibration()
	inst.t0 = time.Now()
	w := b.newWatcher(inst, f, ends)
	if err := connectorAction(ctx, inst, f, "resume", "RUNNING"); err != nil {
		fail(err)
		return
	}
	err = w.waitDone(ctx, sampleEvery, b.cfg.maxRun)
	w.rebase(base)
	w.fill(r, b.cfg.size)
	b.saveSamples(alias, w.samples)
	if rep, e := partitionsReport(ctx, inst, f); e == nil {
		moves.add(rep)
	}
	r.Planner.Moves = movesTotal(inst)
	r.Planner.MoveLog = moves.log
	if err != nil {
		fail(err)
	}
}

// replicated is how many of the records up to ends are on the target.
func (b *bench) replicated(ctx context.Context, f flow, ends map[kafkabench.TP]int64) (int64, error) {
	remote := map[string]int{}
	for tp := range ends {
		remote[f.remote(tp.Topic)] = max(remote[f.remote(tp.Topic)], int(tp.Partition)+1)
	}
	got, err := b.adminB.EndOffsets(ctx, remote)
	if err != nil {
		return 0, err
	}
	var n int64
	for tp, want := range ends {
		n += min(want, got[kafkabench.TP{Topic: f.remote(tp.Topic), Partition: tp.Partition}])
	}
	return n, nil
}

// waitCaughtUp waits until the target holds every record of topics.
func (b *bench) waitCaughtUp(ctx context.Context, f flow, topics map[string]int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		ends, err := b.adminA.EndOffsets(ctx, topics)
		if err == nil {
			n, err := b.replicated(ctx, f, ends)
			if err == nil && n == sum(ends) {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("the target did not catch up with the settling load within %s", limit)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// rebase takes out of the samples the records that were on the target before the measured copy.
func (w *watcher) rebase(base int64) {
	w.total -= base
	for i := range w.samples {
		w.samples[i].Replicated = max(0, w.samples[i].Replicated-base)
	}
	w.firstT = -1
	for _, s := range w.samples {
		if s.Replicated > 0 {
			w.firstT = s.T
			break
		}
	}
}
