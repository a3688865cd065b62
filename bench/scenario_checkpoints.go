package main

// The checkpoints scenario: kmirror's MirrorCheckpointConnector translating many consumer groups, against the
// issue's requirement "checkpoints for 1,000 groups × 100 partitions within one interval". kmirror only: the
// bench runs Java MM2 in dedicated mode with checkpoints off, and MM2 logs nothing per checkpoint round that
// would time one.

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
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

// ---------------------------------------------------------------------------------------------------------
// kmirror's REST API

type ckAPI struct {
	base, connector string
}

type consumerGroupJSON struct {
	Group             string `json:"group"`
	Partitions        int    `json:"partitions"`
	InexactPartitions int    `json:"inexact_partitions"`
	ReadAt            string `json:"read_at"`
}

func (a *ckAPI) put(path string, body any) error {
	js, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPut, a.base+path, bytes.NewReader(js))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("PUT %s: %s: %s", path, resp.Status, rb)
	}
	return nil
}

func (a *ckAPI) get(path string, out any) error {
	resp, err := http.Get(a.base + path)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		rb, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("GET %s: %s: %s", path, resp.Status, rb)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

func (a *ckAPI) groups() ([]consumerGroupJSON, error) {
	var body struct {
		Groups []consumerGroupJSON `json:"groups"`
	}
	err := a.get("/connectors/"+a.connector+"/groups", &body)
	return body.Groups, err
}

// waitGroups polls GET /connectors/{c}/groups every 200 ms until it lists n groups, each with every partition
// translated exactly from offsets read after since.
func (a *ckAPI) waitGroups(ctx context.Context, deadline time.Time, n, partitions int, since time.Time) ([]consumerGroupJSON, error) {
	for {
		gs, err := a.groups()
		ok := 0
		for _, g := range gs {
			read, _ := time.Parse("2006-01-02T15:04:05.000Z", g.ReadAt)
			if g.Partitions == partitions && g.InexactPartitions == 0 && read.After(since) {
				ok++
			}
		}
		if err == nil && ok == n && len(gs) == n {
			return gs, nil
		}
		if time.Now().After(deadline) {
			if err == nil {
				err = fmt.Errorf("%d of %d groups translated exactly (the API lists %d)", ok, n, len(gs))
			}
			return nil, err
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// verify reads every group's offsets and counts the partitions that are not exact, not at pos, or not at the
// same offset on B (the remote topic was written from offset 0 by one idempotent producer per partition).
func (a *ckAPI) verify(ctx context.Context, groups []string, pos map[string][]int64) (int, int, error) {
	var mu sync.Mutex
	var wrong, verified int
	var eg errgroup.Group
	eg.SetLimit(4)
	for _, g := range groups {
		if ctx.Err() != nil {
			break
		}
		eg.Go(func() error {
			var body struct {
				Offsets []struct {
					Partition    int32  `json:"partition"`
					SourceOffset int64  `json:"source_offset"`
					TargetOffset *int64 `json:"target_offset"`
					Exact        bool   `json:"exact"`
					Basis        string `json:"basis"`
				} `json:"offsets"`
			}
			err := a.get("/connectors/"+a.connector+"/groups/"+g+"/offsets", &body)
			bad := 0
			for _, o := range body.Offsets {
				if !o.Exact || o.Basis != "offset_map" || o.TargetOffset == nil || int(o.Partition) >= len(pos[g]) ||
					o.SourceOffset != pos[g][o.Partition] || *o.TargetOffset != o.SourceOffset {
					bad++
				}
			}
			bad += max(0, len(pos[g])-len(body.Offsets))
			mu.Lock()
			wrong += bad
			verified++
			mu.Unlock()
			return err
		})
	}
	err := eg.Wait()
	return verified, wrong, err
}

// ---------------------------------------------------------------------------------------------------------
// The tasks' "checkpoint round" log lines

// The text handler's line: time=... level=DEBUG msg="checkpoint round" ... task=<connector>-<n> ... groups=N took=D
var roundLine = regexp.MustCompile(`^time=(\S+) level=DEBUG msg="checkpoint round" .*\btask=(\S+).* groups=(\d+) took=(\S+)`)

func readRounds(logPath, connector string) ([]checkpointRound, error) {
	bs, err := os.ReadFile(logPath)
	if err != nil {
		return nil, err
	}
	var out []checkpointRound
	count := map[string]int{}
	for _, l := range strings.Split(string(bs), "\n") {
		m := roundLine.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(strings.Trim(m[2], `"`), connector+"-") {
			continue
		}
		end, err1 := time.Parse(time.RFC3339Nano, m[1])
		took, err2 := time.ParseDuration(m[4])
		groups, _ := strconv.Atoi(m[3])
		if err1 != nil || err2 != nil {
			continue
		}
		task := strings.Trim(m[2], `"`)
		count[task]++
		out = append(out, checkpointRound{Task: task, N: count[task], TookS: took.Seconds(), Groups: groups, end: end})
	}
	return out, nil
}

// waitRounds waits until each of tasks tasks has logged at least n rounds.
func waitRounds(ctx context.Context, logPath, connector string, tasks, n int, deadline time.Time) ([]checkpointRound, error) {
	for {
		rounds, err := readRounds(logPath, connector)
		if err != nil {
			return nil, err
		}
		per := map[string]int{}
		for _, r := range rounds {
			per[r.Task] = max(per[r.Task], r.N)
		}
		done := len(per) >= tasks
		for _, c := range per {
			done = done && c >= n
		}
		if done {
			return rounds, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d task(s) logged rounds %v; waited for %d rounds of %d tasks", len(per), per, n, tasks)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// classify names the rounds (first; steady: unchanged; change: the first that started after the re-commit;
// after: later ones) and sums them up per wave (the n-th round of every task).
func classify(rounds []checkpointRound, t0, moved time.Time, smp *ckSampler) ([]checkpointRound, []checkpointWave) {
	changeN := map[string]int{}
	for i := range rounds {
		r := &rounds[i]
		start := r.end.Add(-time.Duration(r.TookS * float64(time.Second)))
		r.StartS = start.Sub(t0).Seconds()
		switch {
		case r.N == 1:
			r.Kind = "first"
		case start.Before(moved):
			r.Kind = "steady"
		case changeN[r.Task] == 0 || changeN[r.Task] == r.N:
			changeN[r.Task] = r.N
			r.Kind = "change"
		default:
			r.Kind = "after"
		}
	}
	byN := map[int][]checkpointRound{}
	for _, r := range rounds {
		byN[r.N] = append(byN[r.N], r)
	}
	var waves []checkpointWave
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		rs := byN[n]
		wv := checkpointWave{Kind: rs[0].Kind, Tasks: len(rs)}
		var first, last time.Time
		for _, r := range rs {
			start := r.end.Add(-time.Duration(r.TookS * float64(time.Second)))
			if first.IsZero() || start.Before(first) {
				first = start
			}
			if r.end.After(last) {
				last = r.end
			}
			wv.MaxTookS = max(wv.MaxTookS, r.TookS)
			if r.Kind != wv.Kind {
				wv.Kind = "mixed"
			}
		}
		wv.StartS, wv.SpanS = first.Sub(t0).Seconds(), last.Sub(first).Seconds()
		a, ok1 := smp.at(first)
		z, ok2 := smp.at(last)
		if ok1 && ok2 {
			wv.CPUS, wv.DBCPUS, wv.BrokerCPUS = z.CPU-a.CPU, z.DBCPU-a.DBCPU, z.BrokerCPU-a.BrokerCPU
		}
		waves = append(waves, wv)
	}
	sort.SliceStable(rounds, func(i, j int) bool { return rounds[i].StartS < rounds[j].StartS })
	return rounds, waves
}

// ---------------------------------------------------------------------------------------------------------
// Sampling kmirror, PostgreSQL and the brokers during the rounds

type ckSampler struct {
	b       *bench
	pid     int
	t0      time.Time
	mu      sync.Mutex
	samples []sample
	at0     struct{ cpu, db, broker, busy, self float64 }
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func newCkSampler(b *bench, pid int) *ckSampler {
	return &ckSampler{b: b, pid: pid, done: make(chan struct{}), stopped: make(chan struct{})}
}

func (s *ckSampler) brokerCPU() float64 {
	var t float64
	for _, n := range []string{"kafka-A", "kafka-B"} {
		c, _ := cpuSeconds(s.b.h.pid(n))
		t += c
	}
	return t
}

func (s *ckSampler) start() {
	s.at0.cpu, _ = cpuSeconds(s.pid)
	s.at0.db = treeCPUSeconds(s.b.h.pid("postgres"))
	s.at0.broker = s.brokerCPU()
	s.at0.busy = machineBusySeconds()
	s.at0.self, _ = cpuSeconds(os.Getpid())
	s.t0 = time.Now()
	go func() {
		defer close(s.stopped)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			s.take()
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
}

func (s *ckSampler) take() {
	cpu, _ := cpuSeconds(s.pid)
	rss, _, _ := memKB(s.pid)
	sm := sample{T: time.Since(s.t0).Seconds(), CPU: cpu - s.at0.cpu, RSSKB: rss,
		DBCPU: treeCPUSeconds(s.b.h.pid("postgres")) - s.at0.db, BrokerCPU: s.brokerCPU() - s.at0.broker}
	self, _ := cpuSeconds(os.Getpid())
	sm.OtherCPU = max(0, machineBusySeconds()-s.at0.busy-sm.CPU-sm.DBCPU-sm.BrokerCPU-(self-s.at0.self))
	s.mu.Lock()
	s.samples = append(s.samples, sm)
	s.mu.Unlock()
}

func (s *ckSampler) stop() {
	s.once.Do(func() {
		close(s.done)
		<-s.stopped
	})
}

// at returns the sample nearest to t (linear interpolation between the two around it).
func (s *ckSampler) at(t time.Time) (sample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return sample{}, false
	}
	x := t.Sub(s.t0).Seconds()
	i := sort.Search(len(s.samples), func(i int) bool { return s.samples[i].T >= x })
	switch {
	case i == 0:
		return s.samples[0], true
	case i == len(s.samples):
		return s.samples[len(s.samples)-1], true
	}
	a, z := s.samples[i-1], s.samples[i]
	f := (x - a.T) / (z.T - a.T)
	lerp := func(p, q float64) float64 { return p + f*(q-p) }
	return sample{T: x, CPU: lerp(a.CPU, z.CPU), DBCPU: lerp(a.DBCPU, z.DBCPU), BrokerCPU: lerp(a.BrokerCPU, z.BrokerCPU),
		OtherCPU: lerp(a.OtherCPU, z.OtherCPU), RSSKB: max(a.RSSKB, z.RSSKB)}, true
}

func (s *ckSampler) peakRSSMB() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var peak int64
	for _, sm := range s.samples {
		peak = max(peak, sm.RSSKB)
	}
	return float64(peak) / 1024
}

// ---------------------------------------------------------------------------------------------------------
// Reporting

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
