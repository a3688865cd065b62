package main

// The checkpoints scenario: kmirror's MirrorCheckpointConnector translating many consumer groups, against the
// issue's requirement "checkpoints for 1,000 groups × 100 partitions within one interval". kmirror only: the
// bench runs Java MM2 in dedicated mode with checkpoints off, and MM2 logs nothing per checkpoint round that
// would time one.

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// checkpointFlags are the knobs of the checkpoints scenario.
type checkpointFlags struct {
	groups     int
	partitions int
	records    int
	interval   time.Duration
	tasks      intList
	advance    int64
	steady     int
}

// intList is a comma-separated list of positive integers as a flag.
type intList []int

func (l *intList) String() string {
	var s []string
	for _, n := range *l {
		s = append(s, strconv.Itoa(n))
	}
	return strings.Join(s, ",")
}

func (l *intList) Set(v string) error {
	var out intList
	for _, p := range clientconfig.CommaList(v) {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 {
			return fmt.Errorf("bad value %q", p)
		}
		out = append(out, n)
	}
	if len(out) == 0 {
		return fmt.Errorf("empty list")
	}
	*l = out
	return nil
}

func registerCheckpointFlags(fs *flag.FlagSet, c *checkpointFlags) {
	c.tasks = intList{1, 4}
	fs.IntVar(&c.groups, "checkpoint-groups", 1000, "consumer groups of the checkpoints scenario")
	fs.IntVar(&c.partitions, "checkpoint-partitions", 100, "partitions of the checkpoints scenario's topic (each group commits an offset on every one)")
	fs.IntVar(&c.records, "checkpoint-records", 1000, "records per partition of the checkpoints scenario's topic")
	fs.DurationVar(&c.interval, "checkpoint-interval", 60*time.Second, "emit.checkpoints.interval.seconds of the checkpoints scenario (whole seconds)")
	fs.Var(&c.tasks, "checkpoint-tasks", "tasks.max values of the checkpoint connector in the checkpoints scenario")
	fs.Int64Var(&c.advance, "checkpoint-advance", 10, "how far every group moves forward on every partition before the measured change round")
	fs.IntVar(&c.steady, "checkpoint-steady", 1, "unchanged rounds to time between the first round and the change round")
}

// checkpointRound is one "checkpoint round" line of a task's DEBUG log.
type checkpointRound struct {
	Task   string  `json:"task"`
	N      int     `json:"n"`       // 1, 2, ... per task
	Kind   string  `json:"kind"`    // first, steady, change, after
	StartS float64 `json:"start_s"` // since the checkpoint connector's creation
	TookS  float64 `json:"took_s"`
	Groups int     `json:"groups"`
	end    time.Time
}

// checkpointWave is the n-th round of every task together.
type checkpointWave struct {
	Kind       string  `json:"kind"`
	Tasks      int     `json:"tasks"`
	StartS     float64 `json:"start_s"`      // the first task's start, since the connector's creation
	MaxTookS   float64 `json:"max_took_s"`   // the slowest task's round
	SpanS      float64 `json:"span_s"`       // first start to last end
	CPUS       float64 `json:"cpu_s"`        // kmirror's CPU over the span
	DBCPUS     float64 `json:"db_cpu_s"`     // PostgreSQL's
	BrokerCPUS float64 `json:"broker_cpu_s"` // brokers A+B
}

// pgTable is what a table of kmirror's database takes.
type pgTable struct {
	Rows       int64   `json:"rows"`
	TotalBytes int64   `json:"total_bytes"` // pg_total_relation_size: heap, indexes, TOAST, free space and visibility maps
	HeapBytes  int64   `json:"heap_bytes"`  // pg_relation_size (includes dead tuples of updated rows)
	IndexBytes int64   `json:"index_bytes"`
	TupleBytes int64   `json:"tuple_bytes"` // sum(pg_column_size(row)): the live rows' data
	Per        int64   `json:"per"`         // the count the per-1,000 figure divides by
	Per1000    float64 `json:"total_bytes_per_1000"`
}

// checkpointFigures are the checkpoints scenario's results.
type checkpointFigures struct {
	Groups       int     `json:"groups"`
	Partitions   int     `json:"partitions"`
	Translations int     `json:"translations"`
	IntervalS    float64 `json:"interval_s"`
	SourceTasks  int     `json:"source_tasks_max"`
	Advance      int64   `json:"advance"` // how far every group moved before the change round

	CommitS        float64 `json:"commit_s"`            // committing every group's offsets on A (8 admin calls in flight)
	FirstCompleteS float64 `json:"first_complete_s"`    // connector creation -> every translation visible and exact
	FirstRoundS    float64 `json:"first_round_s"`       // the slowest task's first round
	SteadyRoundS   float64 `json:"steady_round_s"`      // the slowest task's unchanged round (max over the steady waves)
	ChangeRoundS   float64 `json:"change_round_s"`      // the slowest task's round after every group moved
	MoveVisibleS   float64 `json:"move_visible_s"`      // re-commit done -> every new offset visible and exact (waits for the tick)
	ReadVisibleS   float64 `json:"read_to_visible_s"`   // the change round's first read of the source -> every group's new offsets in the API
	RoundPer100k   float64 `json:"round_s_per_100k"`    // the change round per 100,000 translations
	Checkpoints    int64   `json:"checkpoints_written"` // records on the checkpoints topic at the end
	Verified       int     `json:"groups_verified"`     // groups whose every partition was checked after the change round
	Wrong          int     `json:"partitions_wrong"`    // of those: not exact, not the committed offset, or not the source offset on B
	APIGroupsS     float64 `json:"api_groups_s"`        // one GET /connectors/{c}/groups with every translation stored
	// Two phases of a round replayed by the bench after the rounds with the functions the task calls (the
	// same client and SQL), to split a round: reading every group's committed offsets on the source
	// (kafka.Admin.GroupOffsets, 8 groups in flight) and the one offset-map query for every position
	// (store.OffsetRangesAround).
	ReplayReadS   float64 `json:"replay_group_offsets_s"`
	ReplayLookupS float64 `json:"replay_offset_ranges_around_s"`

	CPUS          float64 `json:"cpu_s"`    // kmirror, connector creation -> change round visible
	DBCPUS        float64 `json:"db_cpu_s"` // PostgreSQL, same window
	OtherCPUPct   float64 `json:"other_cpu_pct"`
	BaselineRSSMB float64 `json:"baseline_rss_mb"` // VmRSS before the checkpoint connector (source connector idle)
	PeakRSSMB     float64 `json:"peak_rss_mb"`     // VmHWM, reset before the checkpoint connector
	SettledRSSMB  float64 `json:"settled_rss_mb"`  // VmRSS when the change round starts: what stays between rounds
	RSSPer1000    float64 `json:"rss_mb_per_1000_translations"`

	OffsetRanges pgTable `json:"offset_ranges"` // per 1,000 replicated partitions
	GroupOffsets pgTable `json:"group_offsets"` // per 1,000 translations (group × partition)

	Rounds []checkpointRound `json:"rounds"`
	Waves  []checkpointWave  `json:"waves"`
}

// scenarioCheckpoints: for each tasks.max of -checkpoint-tasks, a topic of -checkpoint-partitions partitions
// replicated by a MirrorSourceConnector, -checkpoint-groups groups committed on every partition, and a
// MirrorCheckpointConnector translating them every -checkpoint-interval.
func (b *bench) scenarioCheckpoints(ctx context.Context) error {
	for _, t := range b.cfg.ck.tasks {
		for _, s := range b.systems() {
			if _, ok := s.(kmirrorSystem); !ok || ctx.Err() != nil {
				continue
			}
			b.checkpointRun(ctx, s, t)
		}
	}
	return ctx.Err()
}

func (b *bench) checkpointRun(ctx context.Context, s system, tasksMax int) {
	ck := b.cfg.ck
	alias := b.alias(s, fmt.Sprintf("ck%d", tasksMax))
	n := ck.groups * ck.partitions
	variant := fmt.Sprintf("%s groups × %d partitions, tasks.max=%d", thousands(float64(ck.groups)), ck.partitions, tasksMax)
	r := &result{Scenario: "checkpoints", Variant: variant, System: s.name(), Alias: alias, TasksMax: tasksMax,
		Partitions: ck.partitions, Linger: b.cfg.linger, BatchSize: b.cfg.batchSize}
	fig := &checkpointFigures{Groups: ck.groups, Partitions: ck.partitions, Translations: n, IntervalS: ck.interval.Seconds(),
		SourceTasks: b.cfg.tasks, Advance: ck.advance}
	r.Checkpoints = fig
	defer func() { b.finishCheckpoints(r) }()
	defer b.cleanup(context.WithoutCancel(ctx), alias)
	if err := b.checkpointRunErr(ctx, s, r, fig, alias, tasksMax); err != nil {
		r.Error = err.Error()
	}
}

func (b *bench) checkpointRunErr(ctx context.Context, s system, r *result, fig *checkpointFigures, alias string, tasksMax int) error {
	ck := b.cfg.ck
	topic := "ck-" + alias
	topics := map[string]int{topic: ck.partitions}
	if err := b.createTopics(ctx, b.adminA, topics); err != nil {
		return err
	}
	r.Records = int64(ck.partitions * ck.records)
	if err := kafkabench.Load(ctx, kafkabench.LoadConfig{Bootstrap: b.a, Partitions: partitionsOf(topics), Records: r.Records,
		Size: b.cfg.size, Compression: b.cfg.compression, Payload: b.payload}); err != nil {
		return err
	}
	ends, err := b.adminA.EndOffsets(ctx, topics)
	if err != nil {
		return err
	}
	for p := range ck.partitions {
		if ends[kafkabench.TP{Topic: topic, Partition: int32(p)}] <= ck.advance {
			return fmt.Errorf("partition %d has %d records: too few for -checkpoint-advance %d", p, ends[kafkabench.TP{Topic: topic, Partition: int32(p)}], ck.advance)
		}
	}

	f := flow{alias: alias, filter: []string{topic}, topics: topics, tasks: b.cfg.tasks, prod: b.prodSettings(b.cfg.linger, b.cfg.batchSize), refresh: b.cfg.refresh}
	b.waitQuiet(ctx)
	logf("checkpoints / %s / %s: starting (alias %s)", r.Variant, s.name(), alias)
	inst, err := s.start(ctx, b, f, alias)
	if err != nil {
		return err
	}
	profDone := closedChan()
	defer func() { b.stopInstance(inst, r, alias, profDone) }()
	w := b.newWatcher(inst, f, ends)
	if err := w.waitDone(ctx, 250*time.Millisecond, b.cfg.maxRun); err != nil {
		return fmt.Errorf("replication: %w", err)
	}
	b.saveSamples(alias, w.samples)
	r.StartupS, r.TotalS = w.firstT, w.doneT
	db, err := pgx.Connect(ctx, inst.dbURL)
	if err != nil {
		return err
	}
	defer db.Close(context.WithoutCancel(ctx))
	if err := waitOffsetMap(ctx, db, alias, topic, ends, b.cfg.maxRun); err != nil {
		return err
	}

	// Every group on every partition, at a random position that leaves room for the later move forward.
	rng := rand.New(rand.NewPCG(42, uint64(tasksMax)))
	groups := make([]string, ck.groups)
	pos := make(map[string][]int64, ck.groups)
	for i := range groups {
		groups[i] = fmt.Sprintf("ck-%s-g%05d", alias, i)
		ps := make([]int64, ck.partitions)
		for p := range ps {
			end := ends[kafkabench.TP{Topic: topic, Partition: int32(p)}]
			ps[p] = rng.Int64N(end - ck.advance + 1)
		}
		pos[groups[i]] = ps
	}
	admin, err := kafka.NewAdmin(map[string]string{"bootstrap.servers": b.a}, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	defer admin.Close()
	t := time.Now()
	if err := commitGroups(ctx, admin, topic, groups, pos); err != nil {
		return err
	}
	fig.CommitS = time.Since(t).Seconds()
	logf("checkpoints: committed %s groups × %d partitions on A in %.1f s", thousands(float64(ck.groups)), ck.partitions, fig.CommitS)

	api := &ckAPI{base: inst.api, connector: "ck-" + alias}
	if err := api.put("/admin/loggers/kmirror.connectors", map[string]string{"level": "DEBUG"}); err != nil {
		return fmt.Errorf("log level: %w", err)
	}
	if inst.pprofAddr != "" {
		// The base for the rounds' allocations: go tool pprof -sample_index=alloc_space -base <this> <alias>.heap.pprof
		_ = b.saveProfile(inst.pprofAddr, "/debug/pprof/heap", filepath.Join(b.out, "profiles", alias+".heap-before.pprof"))
	}
	resetPeakRSS(inst.pid)
	rssKB, _, _ := memKB(inst.pid)
	fig.BaselineRSSMB = float64(rssKB) / 1024

	cfg := map[string]string{
		"connector.class":                      "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
		"source.cluster.alias":                 alias,
		"target.cluster.alias":                 "B",
		"source.cluster.bootstrap.servers":     b.a,
		"target.cluster.bootstrap.servers":     b.b,
		"topics":                               topic,
		"groups":                               regexp.QuoteMeta("ck-"+alias+"-") + ".*",
		"tasks.max":                            strconv.Itoa(tasksMax),
		"emit.checkpoints.interval.seconds":    strconv.Itoa(max(1, int(ck.interval.Seconds()))),
		"checkpoints.topic.replication.factor": "1",
		"sync.group.offsets.enabled":           "false",
	}
	smp := newCkSampler(b, inst.pid)
	smp.start()
	defer smp.stop()
	t0 := time.Now()
	smp.t0 = t0
	if err := api.put("/connectors/"+api.connector+"/config", cfg); err != nil {
		return fmt.Errorf("create the checkpoint connector: %w", err)
	}
	if inst.pprofAddr != "" {
		profDone = make(chan struct{})
		go func() {
			defer close(profDone)
			path := filepath.Join(b.out, "profiles", alias+".cpu.pprof")
			q := fmt.Sprintf("/debug/pprof/profile?seconds=%d", int(b.cfg.profileFor.Seconds()))
			if err := b.saveProfile(inst.pprofAddr, q, path); err != nil {
				logf("cpu profile: %v", err)
				return
			}
			r.CPUProfile = path
		}()
	}
	logPath := filepath.Join(b.out, "logs", alias+".log")
	limit := b.cfg.maxRun + 3*ck.interval

	// 1. The first round: every translation visible and exact.
	if _, err := api.waitGroups(ctx, t0.Add(limit), ck.groups, ck.partitions, time.Time{}); err != nil {
		return fmt.Errorf("first round: %w", err)
	}
	fig.FirstCompleteS = time.Since(t0).Seconds()
	logf("checkpoints: every translation exact %.1f s after the connector's creation", fig.FirstCompleteS)

	// 2. Unchanged rounds, timed from the log.
	rounds, err := waitRounds(ctx, logPath, api.connector, tasksMax, 1+ck.steady, t0.Add(limit+time.Duration(ck.steady)*ck.interval))
	if err != nil {
		return err
	}
	t = time.Now()
	if _, err := api.groups(); err != nil {
		return err
	}
	fig.APIGroupsS = time.Since(t).Seconds()

	// 3. Every group moves forward; the next round must show it.
	for _, ps := range pos {
		for p := range ps {
			ps[p] += ck.advance
		}
	}
	if err := commitGroups(ctx, admin, topic, groups, pos); err != nil {
		return err
	}
	moved := time.Now()
	// Wait for the change round in the log first: a GET /connectors/{c}/groups over 100,000 stored translations
	// costs PostgreSQL 0.1-0.4 s, and polls every half second would compete with the round they wait for. Each
	// task stores its round in one transaction and logs the line right after the commit; the API then confirms.
	if rounds, err = waitRounds(ctx, logPath, api.connector, tasksMax, 2+ck.steady, moved.Add(limit)); err != nil {
		return fmt.Errorf("round after the move: %w", err)
	}
	gs, err := api.waitGroups(ctx, moved.Add(limit), ck.groups, ck.partitions, moved)
	if err != nil {
		return fmt.Errorf("round after the move: %w", err)
	}
	visible := time.Now()
	fig.MoveVisibleS = visible.Sub(moved).Seconds()
	var firstRead time.Time
	for _, g := range gs {
		if at, err := time.Parse("2006-01-02T15:04:05.000Z", g.ReadAt); err == nil && (firstRead.IsZero() || at.Before(firstRead)) {
			firstRead = at
		}
	}
	fig.ReadVisibleS = visible.Sub(firstRead).Seconds()
	smp.stop()
	b.saveSamples(alias+".checkpoints", smp.samples)
	logf("checkpoints: every group's new offsets visible %.1f s after the re-commit", fig.MoveVisibleS)

	// Figures.
	last, _ := smp.at(visible)
	fig.CPUS, fig.DBCPUS = last.CPU, last.DBCPU
	if last.T > 0 {
		fig.OtherCPUPct = 100 * last.OtherCPU / last.T / float64(runtime.NumCPU())
	}
	_, hwm, _ := memKB(inst.pid)
	fig.PeakRSSMB = max(float64(hwm)/1024, smp.peakRSSMB())
	fig.RSSPer1000 = (fig.PeakRSSMB - fig.BaselineRSSMB) * 1000 / float64(fig.Translations)
	fig.Rounds, fig.Waves = classify(rounds, t0, moved, smp)
	for _, wv := range fig.Waves {
		switch wv.Kind {
		case "first":
			fig.FirstRoundS = wv.MaxTookS
		case "steady":
			fig.SteadyRoundS = max(fig.SteadyRoundS, wv.MaxTookS)
		case "change":
			if fig.ChangeRoundS == 0 {
				fig.ChangeRoundS = wv.MaxTookS
				if sm, ok := smp.at(t0.Add(time.Duration(wv.StartS * float64(time.Second)))); ok {
					fig.SettledRSSMB = float64(sm.RSSKB) / 1024
				}
			}
		}
	}
	fig.RoundPer100k = fig.ChangeRoundS * 100_000 / float64(fig.Translations)
	if e, err := b.adminB.EndOffsets(ctx, map[string]int{alias + ".checkpoints.internal": 1}); err == nil {
		fig.Checkpoints = sum(e)
	}
	if fig.OffsetRanges, err = tableSize(ctx, db, "offset_ranges", int64(ck.partitions)); err != nil {
		return err
	}
	if fig.GroupOffsets, err = tableSize(ctx, db, "group_offsets", int64(fig.Translations)); err != nil {
		return err
	}
	if err := replayPhases(ctx, fig, admin, inst.dbURL, alias, topic, groups, pos); err != nil {
		return err
	}
	fig.Verified, fig.Wrong, err = api.verify(ctx, groups, pos)
	if err != nil {
		return err
	}
	if fig.Wrong > 0 {
		return fmt.Errorf("%d of %d translations are not the exact new position", fig.Wrong, fig.Translations)
	}
	r.Done = true
	return nil
}

// waitOffsetMap waits until the source task has committed offset-map ranges up to every partition's end, so
// that the checkpoint rounds measure translation rather than the source task's commit interval.
func waitOffsetMap(ctx context.Context, db *pgx.Conn, alias, topic string, ends map[kafkabench.TP]int64, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		rows, err := db.Query(ctx, `SELECT partition, max(source_end) FROM offset_ranges WHERE source_alias = $1 AND topic = $2 GROUP BY partition`, alias, topic)
		if err != nil {
			return err
		}
		covered := 0
		for rows.Next() {
			var p int32
			var e int64
			if err := rows.Scan(&p, &e); err != nil {
				rows.Close()
				return err
			}
			if e+1 >= ends[kafkabench.TP{Topic: topic, Partition: p}] {
				covered++
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if covered == len(ends) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("offset map covers %d of %d partitions after %s", covered, len(ends), limit)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return err
		}
	}
}

// commitGroups commits pos (per group, per partition of topic) on the source, 8 groups at a time.
func commitGroups(ctx context.Context, admin *kafka.Admin, topic string, groups []string, pos map[string][]int64) error {
	var eg errgroup.Group
	eg.SetLimit(8)
	for _, g := range groups {
		eg.Go(func() error {
			offs := make([]kafka.GroupOffset, len(pos[g]))
			for p, o := range pos[g] {
				offs[p] = kafka.GroupOffset{Topic: topic, Partition: int32(p), Offset: o}
			}
			return admin.AlterGroupOffsets(ctx, g, offs)
		})
	}
	return eg.Wait()
}

// replayPhases times two phases of a round as the task runs them, from this process, while kmirror is between
// rounds.
func replayPhases(ctx context.Context, fig *checkpointFigures, admin *kafka.Admin, dbURL, alias, topic string, groups []string, pos map[string][]int64) error {
	t := time.Now()
	offsets, failed, err := admin.GroupOffsets(ctx, groups)
	if err != nil || len(failed) > 0 {
		return fmt.Errorf("replay GroupOffsets: %v (%d groups failed)", err, len(failed))
	}
	fig.ReplayReadS = time.Since(t).Seconds()
	st, err := store.Open(ctx, dbURL, slog.New(slog.DiscardHandler), store.OpenOptions{MaxConns: 1})
	if err != nil {
		return err
	}
	defer st.Close()
	var queries []kmtype.RangeQuery
	for _, g := range groups {
		for _, o := range offsets[g] {
			queries = append(queries, kmtype.RangeQuery{Offset: o.Offset, RangeKey: kmtype.RangeKey{SourceAlias: alias, TargetAlias: "B", Topic: o.Topic, Partition: o.Partition}})
		}
	}
	if len(queries) != len(groups)*len(pos[groups[0]]) {
		return fmt.Errorf("replay GroupOffsets: %d offsets, want %d", len(queries), len(groups)*len(pos[groups[0]]))
	}
	t = time.Now()
	around, err := st.OffsetRangesAround(ctx, queries)
	if err != nil {
		return err
	}
	fig.ReplayLookupS = time.Since(t).Seconds()
	for i, a := range around {
		if a.Prev == nil || a.Prev.SourceStart > queries[i].Offset {
			return fmt.Errorf("replay OffsetRangesAround: no range at %s-%d offset %d", topic, queries[i].Partition, queries[i].Offset)
		}
	}
	return nil
}

// resetPeakRSS resets the process's VmHWM to its current RSS (clear_refs 5, Linux ≥ 4.0), so that the peak
// afterwards is the checkpoint rounds' rather than the replication's.
func resetPeakRSS(pid int) {
	if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0o200); err != nil {
		logf("cannot reset the peak RSS of pid %d (the sampled peak is used): %v", pid, err)
	}
}

func tableSize(ctx context.Context, db *pgx.Conn, table string, per int64) (pgTable, error) {
	t := pgTable{Per: per}
	// The table name is one of two constants.
	err := db.QueryRow(ctx, fmt.Sprintf(`SELECT count(*), coalesce(sum(pg_column_size(t.*)), 0), pg_total_relation_size('%[1]s'),
		pg_relation_size('%[1]s'), pg_indexes_size('%[1]s') FROM %[1]s t`, table)).Scan(&t.Rows, &t.TupleBytes, &t.TotalBytes, &t.HeapBytes, &t.IndexBytes)
	if err != nil {
		return t, fmt.Errorf("size of %s: %w", table, err)
	}
	if per > 0 {
		t.Per1000 = float64(t.TotalBytes) * 1000 / float64(per)
	}
	return t, nil
}
