package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
)

// pgFlags configure the pgload scenario: many workers of one cluster against one PostgreSQL.
type pgFlags struct {
	workers, connectors, topics, tasks, rate int
	window                                   time.Duration
}

func registerPGFlags(fs *flag.FlagSet, p *pgFlags) {
	fs.IntVar(&p.workers, "pg-workers", 10, "kmirror serve processes of the pgload scenario (one cluster, one database)")
	fs.IntVar(&p.connectors, "pg-connectors", 3, "MirrorSourceConnectors of the pgload scenario")
	fs.IntVar(&p.topics, "pg-topics", 10, "topics of each pgload connector (-hot-partitions each)")
	fs.IntVar(&p.tasks, "pg-tasks", 8, "tasks.max of each pgload connector")
	fs.IntVar(&p.rate, "pg-rate", 2000, "records/s offered over all the pgload connectors' partitions")
	fs.DurationVar(&p.window, "pg-window", time.Minute, "the window over which the pgload scenario counts PostgreSQL's statements")
}

// pgFigures are the pgload scenario's counts over its window, per second.
type pgFigures struct {
	Workers, Connectors, Tasks, Partitions int
	WindowS                                float64
	// StatementsPerS is from pg_stat_statements (every statement of the database, the workers' reads and
	// writes); 0 when the extension is not loaded.
	StatementsPerS float64 `json:"statements_per_s"`
	CommitsPerS    float64 `json:"commits_per_s"` // pg_stat_database xact_commit
	RowsWrittenPS  float64 `json:"rows_written_per_s"`
	PostgresCores  float64 `json:"postgres_cores"`
	// ReplicatedPerS is what the connectors replicated over the window, records per second.
	ReplicatedPerS float64 `json:"replicated_per_s"`
	// Top is the most frequent statements: calls per second and the statement's first words.
	Top []string `json:"top,omitempty"`
}

// scenarioPGLoad: -pg-workers kmirror processes of one cluster on this machine against one database, with
// -pg-connectors source connectors replicating a paced load; PostgreSQL's statements, commits and written rows
// are counted over -pg-window once every task runs.
func (b *bench) scenarioPGLoad(ctx context.Context) error {
	p := b.cfg.pg
	alias := b.alias(kmirrorSys, "pg")
	db := "kmb_" + strings.ToLower(alias)
	r := &result{Scenario: "pgload", Variant: fmt.Sprintf("%d workers, %d connectors", p.workers, p.connectors), System: "kmirror", Alias: alias,
		TasksMax: p.tasks, Partitions: p.connectors * p.topics * b.cfg.hot.perTopic}
	fig := &pgFigures{Workers: p.workers, Connectors: p.connectors, Partitions: r.Partitions}
	r.PG = fig
	defer func() { b.finish(r) }()
	defer b.cleanup(context.WithoutCancel(ctx), alias)
	for c := range p.connectors {
		defer b.cleanup(context.WithoutCancel(ctx), fmt.Sprintf("%s%d", alias, c))
	}
	fail := func(err error) error { r.Error = err.Error(); return nil }
	if err := b.h.psql("CREATE DATABASE " + db); err != nil {
		return fail(err)
	}
	defer func() { _ = b.h.psql("DROP DATABASE IF EXISTS " + db + " WITH (FORCE)") }()
	var apis []string
	var workers []*child
	defer func() {
		// All at once: one by one, each stopping worker's tasks would move to the others first.
		var wg sync.WaitGroup
		for _, c := range workers {
			wg.Add(1)
			go func() { defer wg.Done(); _ = c.stop(90 * time.Second) }()
		}
		wg.Wait()
	}()
	for i := range p.workers {
		port, err := freePort()
		if err != nil {
			return fail(err)
		}
		listen := fmt.Sprintf("127.0.0.1:%d", port)
		c, err := startChild(filepath.Join(b.out, "logs", fmt.Sprintf("%s-w%d.log", alias, i)), envList(b.cfg.kmirrorEnv), b.kmirrorBin,
			"serve", "--database-url", b.h.databaseURL(db), "--listen", listen, "--worker-id", fmt.Sprintf("w%d", i))
		if err != nil {
			return fail(err)
		}
		workers = append(workers, c)
		apis = append(apis, "http://"+listen)
	}
	for _, api := range apis {
		if err := awaitHealthy(ctx, api); err != nil {
			return fail(err)
		}
	}
	topics := map[string]int{}
	var flows []flow
	for c := range p.connectors {
		f := flow{alias: fmt.Sprintf("%s%d", alias, c), tasks: p.tasks, topics: map[string]int{},
			prod: b.prodSettings(b.cfg.linger, b.cfg.batchSize), refresh: b.cfg.refresh}
		f.filter = []string{fmt.Sprintf("pg-%s-.*", f.alias)}
		for t := range p.topics {
			name := fmt.Sprintf("pg-%s-%02d", f.alias, t)
			f.topics[name] = b.cfg.hot.perTopic
			topics[name] = b.cfg.hot.perTopic
		}
		flows = append(flows, f)
	}
	if err := b.createTopics(ctx, b.adminA, topics); err != nil {
		return fail(err)
	}
	if err := b.waitLeaders(ctx, b.adminA, topics); err != nil {
		return fail(err)
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stopLoad(); wg.Wait() }()
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err := kafkabench.ProduceAtRate(loadCtx, kafkabench.RateConfig{Bootstrap: b.a, Partitions: partitionsOf(topics), Rate: p.rate,
			Duration: time.Hour, Size: b.cfg.size, Compression: b.cfg.compression, Payload: b.payload})
		if err != nil && loadCtx.Err() == nil {
			logf("pgload: the load failed: %v", err)
		}
	}()
	for _, f := range flows {
		body, _ := json.Marshal(b.connectorConfig(f))
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, apis[0]+"/connectors/"+connectorName(f)+"/config", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return fail(err)
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			return fail(fmt.Errorf("create connector: %s: %s", resp.Status, rb))
		}
	}
	// Every task running, then a while for the first commits and reports to settle.
	deadline := time.Now().Add(3 * time.Minute)
	for {
		running := 0
		for _, f := range flows {
			running += runningTasks(apis[0] + "/connectors/" + connectorName(f) + "/status")
		}
		fig.Tasks = running
		if running >= p.connectors*min(p.tasks, p.topics*b.cfg.hot.perTopic) {
			break
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fail(fmt.Errorf("only %d tasks run after 3 minutes", running))
		}
		time.Sleep(time.Second)
	}
	logf("pgload: %d tasks run on %d workers; counting over %s", fig.Tasks, p.workers, p.window)
	time.Sleep(15 * time.Second)
	pgss := b.h.psql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements") == nil && b.h.psql("SELECT pg_stat_statements_reset()") == nil
	stat := func() (commits, rows float64) {
		out, _ := b.h.run(nil, "psql", "--dir", b.h.dir, "-At", "-F", " ", "-c",
			"SELECT xact_commit, tup_inserted+tup_updated+tup_deleted FROM pg_stat_database WHERE datname = '"+db+"'")
		f := strings.Fields(out)
		if len(f) == 2 {
			commits, _ = strconv.ParseFloat(f[0], 64)
			rows, _ = strconv.ParseFloat(f[1], 64)
		}
		return commits, rows
	}
	onTarget := func() int64 {
		var n int64
		for _, f := range flows {
			ends, err := b.adminA.EndOffsets(ctx, f.topics)
			if err != nil {
				continue
			}
			got, _ := b.replicated(ctx, f, ends)
			n += got
		}
		return n
	}
	rec0 := onTarget()
	c0, w0 := stat()
	cpu0, t0 := treeCPUSeconds(b.h.pid("postgres")), time.Now()
	if err := sleepCtx(ctx, p.window); err != nil {
		return err
	}
	c1, w1 := stat()
	rec1 := onTarget()
	dt := time.Since(t0).Seconds()
	fig.WindowS = dt
	fig.PostgresCores = (treeCPUSeconds(b.h.pid("postgres")) - cpu0) / dt
	fig.CommitsPerS, fig.RowsWrittenPS = (c1-c0)/dt, (w1-w0)/dt
	fig.ReplicatedPerS = float64(rec1-rec0) / dt
	if pgss {
		out, _ := b.h.run(nil, "psql", "--dir", b.h.dir, "-At", "-F", "\t", "-c",
			"SELECT s.calls, regexp_replace(left(s.query, 90), '\\s+', ' ', 'g') FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = '"+db+"' ORDER BY s.calls DESC")
		for i, line := range strings.Split(strings.TrimSpace(out), "\n") {
			calls, q, _ := strings.Cut(line, "\t")
			n, _ := strconv.ParseFloat(calls, 64)
			fig.StatementsPerS += n / dt
			if i < 14 {
				fig.Top = append(fig.Top, fmt.Sprintf("%.1f/s %s", n/dt, q))
			}
		}
	}
	logf("pgload: %.0f statements/s, %.0f commits/s, %.0f rows written/s, PostgreSQL %.2f cores, %.0f records/s replicated",
		fig.StatementsPerS, fig.CommitsPerS, fig.RowsWrittenPS, fig.PostgresCores, fig.ReplicatedPerS)
	r.Done = true
	return nil
}

func awaitHealthy(ctx context.Context, api string) error {
	deadline := time.Now().Add(90 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		if resp, err := http.Get(api + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("%s did not become healthy", api)
}
