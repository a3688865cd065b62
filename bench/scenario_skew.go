package main

import (
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
	"github.com/kmirror/kmirror/parallelism"
)

// skewFlags configure the skew scenario: the load moves from one topic to another halfway.
type skewFlags struct {
	topics int
	phase  time.Duration
}

func registerSkewFlags(fs *flag.FlagSet, s *skewFlags) {
	fs.IntVar(&s.topics, "skew-topics", 16, "topics of the skew scenario (-hot-partitions each, tasks.max -hot-tasks)")
	fs.DurationVar(&s.phase, "skew-phase", 4*time.Minute, "how long each of the skew scenario's two loads lasts")
}

// scenarioSkew: a paced load (-hot-settle-rate records/s) of which one topic carries -hot-share for
// -skew-phase, then another topic (of those the grouped deal put on the fewest tasks) for as long. It measures how
// long the planner takes to follow the second topic (moves visible in /partitions) and audits every record
// on the target: each value carries its sequence number in its partition, and the target is read back in
// full (missing, duplicated, reordered).
func (b *bench) scenarioSkew(ctx context.Context) error {
	h, sk := b.cfg.hot, b.cfg.skew
	v := b.assignmentVariants()[0]
	sys := withConfig(v.extra)
	alias := b.alias(sys, "sk")
	topics := map[string]int{}
	name := func(i int) string { return fmt.Sprintf("skew-%s-%02d", alias, i) }
	for i := range sk.topics {
		topics[name(i)] = h.perTopic
	}
	r := &result{Scenario: "skew", Variant: fmt.Sprintf("%s, %s", v.name, describe(v.extra)), System: "kmirror", Alias: alias,
		TasksMax: h.tasks, Partitions: sk.topics * h.perTopic, Linger: b.cfg.linger, BatchSize: b.cfg.batchSize,
		Planner: &plannerFigures{Assignment: describe(v.extra), FirstMoveS: -1, FollowedS: -1}}
	defer func() { b.finish(r) }()
	defer b.cleanup(context.WithoutCancel(ctx), alias)
	fail := func(err error) { r.Error = err.Error() }
	if err := b.createTopics(ctx, b.adminA, topics); err != nil {
		fail(err)
		return nil
	}
	if err := b.waitLeaders(ctx, b.adminA, topics); err != nil {
		fail(err)
		return nil
	}
	f := flow{alias: alias, filter: []string{"skew-" + alias + "-.*"}, topics: topics, tasks: h.tasks,
		prod: b.prodSettings(b.cfg.linger, b.cfg.batchSize), refresh: b.cfg.refresh}
	logf("skew: starting (alias %s)", alias)
	inst, err := sys.start(ctx, b, f, alias)
	if err != nil {
		fail(err)
		return nil
	}
	defer b.stopInstance(inst, r, alias, closedChan())
	parts := func(hotIdx int) (hot, cold []kafkabench.TP) {
		for i := range sk.topics {
			for p := range h.perTopic {
				tp := kafkabench.TP{Topic: name(i), Partition: int32(p)}
				if i == hotIdx {
					hot = append(hot, tp)
				} else {
					cold = append(cold, tp)
				}
			}
		}
		return hot, cold
	}
	seq := kafkabench.NewSequences()
	var moves moveLogger
	load := func(ctx context.Context, hotIdx int) error {
		hot, cold := parts(hotIdx)
		_, err := kafkabench.ProduceSequenced(ctx, kafkabench.RateConfig{Bootstrap: b.a, Partitions: weightedPartitions(hot, cold, h.share),
			Rate: h.settleRate, Duration: sk.phase, Size: b.cfg.size, Compression: b.cfg.compression, Payload: b.payload}, seq)
		return err
	}
	// Phase 1: topic 0 is hot. The report is watched meanwhile, for the moves and for the next hot topic.
	var wg sync.WaitGroup
	var loadErr error
	wg.Add(1)
	go func() { defer wg.Done(); loadErr = load(ctx, 0) }()
	next := -1
	t1 := time.Now()
	for time.Since(t1) < sk.phase && ctx.Err() == nil {
		time.Sleep(2 * time.Second)
		if rep, err := partitionsReport(ctx, inst, f); err == nil {
			moves.add(rep)
			pick, fewest := -1, 0
			for i := 1; i < sk.topics; i++ {
				if n, complete := topicTasks(rep, name(i), h.perTopic); complete && (pick < 0 || n < fewest) {
					pick, fewest = i, n
				}
			}
			if pick >= 0 {
				next = pick
			}
		}
	}
	wg.Wait()
	if loadErr != nil {
		fail(fmt.Errorf("phase 1 load: %w", loadErr))
		return nil
	}
	if n, _ := topicTasks(mustReport(ctx, inst, f), name(0), h.perTopic); n > 0 {
		logf("skew: phase 1 ends with %s on %d task(s)", name(0), n)
	}
	if next < 0 {
		fail(fmt.Errorf("no topic other than %s reported all its partitions", name(0)))
		return nil
	}
	// Phase 2: the load moves to topic next.
	logf("skew: the load moves from %s to %s (on %d task(s))", name(0), name(next), func() int { n, _ := topicTasks(mustReport(ctx, inst, f), name(next), h.perTopic); return n }())
	switched := time.Now()
	wg.Add(1)
	go func() { defer wg.Done(); loadErr = load(ctx, next) }()
	hotNext, _ := parts(next)
	inHot := map[string]bool{}
	for _, tp := range hotNext {
		inHot[tp.String()] = true
	}
	for time.Since(switched) < sk.phase && ctx.Err() == nil {
		time.Sleep(2 * time.Second)
		rep, err := partitionsReport(ctx, inst, f)
		if err != nil {
			continue
		}
		moves.add(rep)
		for _, mv := range rep.Moves {
			at, err := time.Parse(time.RFC3339Nano, mv.At)
			if err != nil || at.Before(switched) {
				continue
			}
			touches := false
			for _, p := range append(append([]string{}, mv.Out...), mv.In...) {
				touches = touches || inHot[p]
			}
			if s := at.Sub(switched).Seconds(); touches && (r.Planner.FirstMoveS < 0 || s < r.Planner.FirstMoveS) {
				r.Planner.FirstMoveS = s
			}
		}
		if n, complete := topicTasks(rep, name(next), h.perTopic); complete && n >= min(h.tasks, h.perTopic) && r.Planner.FollowedS < 0 {
			r.Planner.FollowedS = time.Since(switched).Seconds()
			logf("skew: %s sits on %d tasks %.0f s after the switch", name(next), n, r.Planner.FollowedS)
		}
	}
	wg.Wait()
	if loadErr != nil {
		fail(fmt.Errorf("phase 2 load: %w", loadErr))
		return nil
	}
	r.Planner.Moves = movesTotal(inst)
	r.Planner.MoveLog = moves.log
	if err := b.waitCaughtUp(ctx, f, topics, 2*time.Minute); err != nil {
		fail(err)
		return nil
	}
	// The audit: every remote partition read back in full.
	written := seq.Written()
	remoteEnds := map[kafkabench.TP]int64{}
	remote := map[string]int{}
	for t, n := range topics {
		remote[f.remote(t)] = n
	}
	got, err := b.adminB.EndOffsets(ctx, remote)
	if err != nil {
		fail(err)
		return nil
	}
	for tp, end := range got {
		remoteEnds[tp] = end
	}
	read, err := kafkabench.ReadSequences(ctx, b.b, remoteEnds)
	if err != nil {
		fail(err)
		return nil
	}
	bySource := map[kafkabench.TP][]int64{}
	for tp, seqs := range read {
		bySource[kafkabench.TP{Topic: tp.Topic[len(alias)+1:], Partition: tp.Partition}] = seqs
	}
	a := auditSequences(written, bySource)
	r.Planner.Audit = &a
	moved := moves.movedPartitions()
	for tp, n := range a.DuplicatedIn {
		if moved[tp] {
			r.Planner.DuplicatedMoved += n
		}
	}
	r.Planner.PipelineRestarts = pipelineRestarts(filepath.Join(b.out, "logs", alias+".log"))
	r.Records, r.Done = a.Written, true
	logf("skew: audit of %d records written: %d read, missing %d, duplicated %d (%d in moved partitions; %d pipeline restarts in the log), reordered %d",
		a.Written, a.Read, a.Missing, a.Duplicated, r.Planner.DuplicatedMoved, r.Planner.PipelineRestarts, a.Reordered)
	return nil
}

func mustReport(ctx context.Context, inst *instance, f flow) *parallelism.Report {
	rep, err := partitionsReport(ctx, inst, f)
	if err != nil {
		return &parallelism.Report{}
	}
	return rep
}
