// Command kmirror-bench compares kmirror's replication with (0) the C pipe, a paced consume-and-produce loop in
// C against librdkafka (bench/cpipe), (a) the same loop in Go over confluent-kafka-go and (c) Java MirrorMaker 2
// in dedicated mode, on the two local Kafka clusters of scripts/harness (and, in the wan scenario, a third
// broker behind a delayed link). It is a program that prints figures (a markdown table and JSON), not a test.
//
//	go run ./bench                                  # the full run (about 35 minutes on 2 cores)
//	go run ./bench -records 200000 -scenarios tasks -tasks 4 -repeat 1 -latency 0   # a quick one
//
// Each system runs as a process of its own (the pipes and kmirror as children of this program, MM2 through
// scripts/harness), one after the other, so that its CPU time (utime+stime) and peak RSS (VmHWM) are its own.
// See docs/benchmarks.md.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/kmirror/kmirror/connectors/clientconfig"
)

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s %s\n", time.Now().Format("15:04:05"), fmt.Sprintf(format, args...))
}

// sleepCtx waits d, or less when ctx ends first (then its error).
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func main() {
	var err error
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case "pipe":
			err = pipeMain(os.Args[2:])
		case "wanlink":
			err = wanlinkMain(os.Args[2:])
		default:
			err = runMain(os.Args[1:])
		}
	} else {
		err = runMain(nil)
	}
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "kmirror-bench:", err)
		os.Exit(1)
	}
}

// config is the command line of a run.
type config struct {
	harnessDir  string
	keepHarness bool
	out         string
	repo        string
	kmirrorBin  string

	records     int64
	size        int
	partitions  int
	compression string

	acks, idempotence, inflight  string
	linger, batchSize            int
	consumer, producer           string
	kmirrorExtra, mm2Extra       string
	pipeProducer, kmirrorEnv     string
	candidateBin, candidateExtra string
	candidateEnv                 string

	scenarios        []string
	systems          []string
	tasksList        []int
	tasks            int
	repeat           int
	warmup           int
	smallLinger      int
	smallBatch       int
	smallRecords     int64
	latencyRate      int
	latencyFor       time.Duration
	manyTopics       int
	manyPartitions   int
	manyRecords      int
	scaleTopics      int
	scalePartitions  int
	scalePrecreate   bool
	cpipeWholeTopics bool
	refresh          int
	maxRun           time.Duration
	quietWait        time.Duration
	pprof            bool
	profileFor       time.Duration
	stats            bool
	ck               checkpointFlags
	wan              wanFlags
	codecs           []string
	codecTasks       int
	hot              hotFlags
	skew             skewFlags
	pg               pgFlags
}

// consumerJava is the -consumer list as Java consumer properties.
func (c *config) consumerJava() map[string]string { return keyValues(c.consumer) }

func keyValues(list string) map[string]string {
	out := map[string]string{}
	for _, kv := range strings.Split(list, ",") {
		kv = strings.TrimSpace(kv)
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[k] = v
		} else if k, ok := strings.CutPrefix(kv, "!"); ok {
			out[k] = "\x00" // remove the key
		}
	}
	return out
}

func parseConfig(args []string) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("kmirror-bench", flag.ContinueOnError)
	fs.StringVar(&c.harnessDir, "harness-dir", "/tmp/kmbench", "scripts/harness directory (started if not running, and then stopped at the end)")
	fs.BoolVar(&c.keepHarness, "keep-harness", false, "leave a harness this run started running")
	fs.StringVar(&c.out, "out", "", "directory for results, logs, configs and profiles (default /tmp/kmirror-bench-<time>)")
	fs.StringVar(&c.repo, "repo", ".", "kmirror repository (for scripts/harness and building cmd/kmirror)")
	fs.StringVar(&c.kmirrorBin, "kmirror-bin", "", "a kmirror binary to use instead of building ./cmd/kmirror")

	fs.Int64Var(&c.records, "records", 5_000_000, "records in the source topic of the throughput scenarios (MM2 needs runs of tens of seconds before its JIT has compiled the hot paths)")
	fs.IntVar(&c.size, "size", 1024, "record value size in bytes")
	fs.IntVar(&c.partitions, "partitions", 8, "partitions of the source topic")
	fs.StringVar(&c.compression, "compression", "none", "compression.type of the loader and of every replication producer: none, gzip, snappy, lz4, zstd")

	fs.StringVar(&c.acks, "acks", "all", "replication producer acks (all systems)")
	fs.StringVar(&c.idempotence, "idempotence", "true", "replication producer enable.idempotence (all systems)")
	fs.StringVar(&c.inflight, "inflight", "5", "replication producer max.in.flight.requests.per.connection (all systems)")
	fs.IntVar(&c.linger, "linger", 20, "replication producer linger.ms (all systems)")
	fs.IntVar(&c.batchSize, "batch-size", 262144, "replication producer batch.size (all systems)")
	fs.StringVar(&c.producer, "producer", "", "extra Java producer settings for every system's replication producer, k=v,k=v (e.g. buffer.memory=33554432)")
	fs.StringVar(&c.consumer, "consumer", "", "extra Java consumer settings for every system's source consumer, k=v,k=v")
	fs.StringVar(&c.kmirrorExtra, "kmirror-config", "", "extra kmirror connector config for experiments, k=v,k=v (e.g. emit.offset-syncs.enabled=false,!offset-syncs.topic.replication.factor; !key removes a key)")
	fs.StringVar(&c.mm2Extra, "mm2-config", "", "extra MM2 properties for experiments, k=v,k=v")
	fs.StringVar(&c.candidateBin, "candidate-bin", "", "a second kmirror binary (e.g. a build with a fix) to run as system \"candidate\" next to kmirror")
	fs.StringVar(&c.candidateExtra, "candidate-config", "", "extra connector config of the candidate, like -kmirror-config")
	fs.StringVar(&c.candidateEnv, "candidate-env", "", "extra environment of the candidate process, like -kmirror-env")
	fs.StringVar(&c.pipeProducer, "pipe-producer", "", "extra librdkafka/confluent-kafka-go properties of the pipe's producers, for experiments, k=v,k=v (e.g. go.events.channel.size=10000)")
	fs.StringVar(&c.kmirrorEnv, "kmirror-env", "", "extra environment of the kmirror process, for experiments, K=V,K=V (e.g. GOGC=50)")

	scen := fs.String("scenarios", "tasks,small,partitions,newtopic", "scenarios to run: tasks, small, partitions, newtopic, scale (10,000 partitions over 1,000 topics; not in the default list), checkpoints (kmirror only), wan (a broker behind a delayed link in a network namespace; root), compression (lz4 and zstd), hot and skew (kmirror's assignments under a hot topic, and the planner following a load that moves; kmirror only), pgload (PostgreSQL's statements per second under many workers)")
	sys := fs.String("systems", "cpipe,pipe,kmirror,mm2", "systems to run: cpipe (the C pipe, the floor), pipe, kmirror, mm2 (and candidate, with -candidate-bin)")
	tl := fs.String("tasks", "1,4,8", "tasks.max values of the tasks scenario")
	fs.IntVar(&c.repeat, "repeat", 3, "runs of each system in the throughput scenarios (interleaved); the table shows medians")
	fs.IntVar(&c.warmup, "warmup", 1, "unmeasured runs before the first throughput run, so that the brokers' JIT is warm (reported as scenario warmup in the JSON only)")
	fs.IntVar(&c.tasks, "scenario-tasks", 8, "tasks.max of the small, partitions and newtopic scenarios")
	fs.IntVar(&c.smallLinger, "small-linger", 0, "linger.ms of the small-batches scenario")
	fs.IntVar(&c.smallBatch, "small-batch", 5120, "batch.size of the small-batches scenario")
	fs.Int64Var(&c.smallRecords, "small-records", 500_000, "records of the small-batches scenario (a topic of its own; 0: -records)")
	fs.IntVar(&c.latencyRate, "latency-rate", 5000, "offered load of the latency phase, records/s")
	fs.DurationVar(&c.latencyFor, "latency", 10*time.Second, "duration of the latency phase after each throughput run (0: none)")
	fs.IntVar(&c.manyTopics, "many-topics", 100, "topics of the partitions scenario")
	fs.IntVar(&c.manyPartitions, "many-partitions", 10, "partitions per topic of the partitions scenario")
	fs.IntVar(&c.manyRecords, "many-records", 10, "records per partition of the partitions scenario (few, so that memory shows the partitions rather than buffered data)")
	fs.IntVar(&c.scaleTopics, "scale-topics", 1000, "topics of the scale scenario (issue 15: 10,000 partitions over 1,000 topics)")
	fs.IntVar(&c.scalePartitions, "scale-partitions", 10, "partitions per topic of the scale scenario (records per partition: -many-records)")
	fs.BoolVar(&c.cpipeWholeTopics, "cpipe-whole-topics", false, "an experiment: the C pipe deals whole topics over its pipelines (topic i to pipeline i mod n) instead of partitions round-robin, to measure what an assignment by topic would save at many topics; kmirror and MM2 always deal partitions round-robin")
	fs.BoolVar(&c.scalePrecreate, "scale-precreate", false, "scale scenario: create the remote topics on B before the system starts, so that the time is the replicator's without the broker's creation of the partitions")
	fs.IntVar(&c.refresh, "refresh", 1, "refresh.topics.interval.seconds for kmirror and MM2")
	fs.DurationVar(&c.quietWait, "quiet-wait", time.Minute, "before each run, wait up to this long for other processes to use < 10% of the machine (0: don't)")
	fs.DurationVar(&c.maxRun, "max-run", 5*time.Minute, "give up waiting for one run to finish after this long")
	fs.BoolVar(&c.pprof, "pprof", false, "run kmirror with its net/http/pprof listener (serve --pprof-listen) and save CPU and heap profiles")
	fs.DurationVar(&c.profileFor, "profile-seconds", 10*time.Second, "length of kmirror's CPU profile (with -pprof)")
	fs.BoolVar(&c.stats, "stats", false, "write the pipe's librdkafka statistics (1 s interval) and summarise them")
	registerCheckpointFlags(fs, &c.ck)
	registerHotFlags(fs, &c.hot)
	registerSkewFlags(fs, &c.skew)
	registerPGFlags(fs, &c.pg)
	codecs := fs.String("compression-codecs", "lz4,zstd", "codecs of the compression scenario (source data and every replication producer)")
	fs.IntVar(&c.codecTasks, "compression-tasks", 4, "tasks.max of the compression scenario")
	var wanRTT, wanLayouts, wanParts string
	registerWanFlags(fs, c, &wanRTT, &wanLayouts, &wanParts)
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if err := parseWanFlags(c, wanRTT, wanLayouts, wanParts); err != nil {
		return nil, err
	}
	c.codecs = clientconfig.CommaList(*codecs)
	for _, z := range c.codecs {
		if !slices.Contains([]string{"gzip", "snappy", "lz4", "zstd"}, z) {
			return nil, fmt.Errorf("bad -compression-codecs value %q", z)
		}
	}
	c.scenarios = clientconfig.CommaList(*scen)
	c.systems = clientconfig.CommaList(*sys)
	for _, s := range c.scenarios {
		if _, ok := scenarios[s]; !ok {
			return nil, fmt.Errorf("unknown scenario %q", s)
		}
	}
	for _, s := range c.systems {
		if !slices.Contains([]string{"cpipe", "pipe", "kmirror", "mm2", "candidate"}, s) {
			return nil, fmt.Errorf("unknown system %q", s)
		}
		if s == "candidate" && c.candidateBin == "" {
			return nil, fmt.Errorf("system candidate needs -candidate-bin")
		}
	}
	for _, t := range clientconfig.CommaList(*tl) {
		n, err := strconv.Atoi(t)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("bad -tasks value %q", t)
		}
		c.tasksList = append(c.tasksList, n)
	}
	if c.smallRecords == 0 {
		c.smallRecords = c.records
	}
	if c.out == "" {
		c.out = filepath.Join(os.TempDir(), "kmirror-bench-"+time.Now().Format("20060102-150405"))
	}
	return c, nil
}

func runMain(args []string) error {
	cfg, err := parseConfig(args)
	if err != nil {
		return err
	}
	repo, err := filepath.Abs(cfg.repo)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(repo, "scripts", "harness")); err != nil {
		return fmt.Errorf("-repo %s: no scripts/harness (run from the repository root or pass -repo)", repo)
	}
	for _, d := range []string{"logs", "config", "profiles", "stats"} {
		if err := os.MkdirAll(filepath.Join(cfg.out, d), 0o755); err != nil {
			return err
		}
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	b := &bench{cfg: cfg, out: cfg.out, repo: repo, self: self, started: time.Now(),
		h: &harness{script: filepath.Join(repo, "scripts", "harness"), dir: cfg.harnessDir}}
	b.args = append([]string{"go run ./bench"}, args...)
	if err := b.h.up(); err != nil {
		return err
	}
	defer func() {
		if b.h.started && !cfg.keepHarness {
			logf("stopping the harness in %s", b.h.dir)
			if err := b.h.down(); err != nil {
				logf("harness down: %v", err)
			}
		}
	}()
	runErr := b.run(ctx)
	if err := b.report(); err != nil && runErr == nil {
		runErr = err
	}
	return runErr
}

func init() {
	// The orchestrator does little work itself; one P keeps it from competing with the systems under test.
	if len(os.Args) < 2 || (os.Args[1] != "pipe" && os.Args[1] != "wanlink") {
		runtime.GOMAXPROCS(1)
	}
}
