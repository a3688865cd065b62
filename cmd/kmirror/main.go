// Command kmirror is MirrorMaker 2 as a service speaking the Kafka Connect REST API.
//
//	kmirror serve              run a worker (REST API + task runtime)
//	kmirror migrate up|status  manage the database schema
//	kmirror passwd NAME        print a users-file line (--rest-users-file): a hashed password or a bearer token
//	kmirror mm2-offsets        hand over from Java MM2: its source offsets as a PATCH .../offsets body
//	kmirror mirror-maker FILE  run a worker for an mm2.properties, as connect-mirror-maker.sh (--print: its connectors)
//	kmirror loadgen            produce a steady stream of records into a topic (demos, tests)
//	kmirror secrets rotate     re-encrypt stored connector secrets with the current --secrets-key
//	kmirror version            print the build
//
// Every flag can also be set through the environment: --database-url is KMIRROR_DATABASE_URL, and so on.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/peterbourgon/ff/v3"
	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/source"
	"github.com/kmirror/kmirror/server"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/tasks"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		// One line: the error chain of a failed connection spans several lines otherwise.
		fmt.Fprintln(os.Stderr, "kmirror:", strings.Join(strings.Fields(err.Error()), " "))
		os.Exit(1)
	}
}

// globals are the flags every command takes.
type globals struct {
	databaseURL string
	logLevel    string
	logFormat   string
}

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.databaseURL, "database-url", "", "PostgreSQL URL, e.g. postgres://user:pass@host:5432/kmirror (KMIRROR_DATABASE_URL)")
	fs.StringVar(&g.logLevel, "log-level", "INFO", "root log level: TRACE, DEBUG, INFO, WARN, ERROR (KMIRROR_LOG_LEVEL)")
	fs.StringVar(&g.logFormat, "log-format", "text", "log format: text or json (KMIRROR_LOG_FORMAT)")
}

func (g *globals) loggers(stderr io.Writer) (*server.Loggers, error) {
	var h slog.Handler
	opts := &slog.HandlerOptions{Level: slog.LevelDebug - 4} // the Loggers tree filters by level
	switch g.logFormat {
	case "text":
		h = slog.NewTextHandler(stderr, opts)
	case "json":
		h = slog.NewJSONHandler(stderr, opts)
	default:
		return nil, fmt.Errorf("invalid --log-format %q: use text or json", g.logFormat)
	}
	return server.NewLoggers(h, g.logLevel)
}

var envOption = ff.WithEnvVarPrefix("KMIRROR")

// goPathGCPercent is the garbage-collection pace of a worker whose source tasks move records through Go
// (--data-path=go, or exactly-once source support: transactions are the Go path's), unless GOGC says
// otherwise. There every replicated record leaves its bytes as garbage once librdkafka has copied them, while
// the live heap stays a few megabytes, so Go's default (collect when the heap doubles) collects every few
// megabytes; in the benchmark 400 cut CPU per GB by about a quarter for 10% more memory. On the C data path
// records never enter Go and Go's default pace costs no measurable CPU, while 400 let the heap grow to five
// times its live size: 1,000 partitions took 27–70 MB more peak RSS (docs/benchmarks.md). GOMEMLIMIT, if set,
// still caps the heap.
const goPathGCPercent = 400

func paceGC(data source.DataPath, eos mirrorconfig.ExactlyOnceSourceSupport) {
	if _, set := os.LookupEnv("GOGC"); !set && (data == source.DataPathGo || eos.Enabled()) {
		debug.SetGCPercent(goPathGCPercent)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	serveCmd := newServeCommand(stderr)
	migrateCmd := newMigrateCommand(stdout, stderr)
	versionCmd := &ffcli.Command{
		Name:       "version",
		ShortUsage: "kmirror version",
		ShortHelp:  "print the build",
		Exec: func(context.Context, []string) error {
			fmt.Fprintf(stdout, "kmirror %s (Kafka Connect REST API %s, commit %s, %s)\n",
				server.Version, server.ConnectVersion, server.Commit(), runtime.Version())
			return nil
		},
	}
	root := &ffcli.Command{
		Name:        "kmirror",
		ShortUsage:  "kmirror <serve|mirror-maker|migrate|health|passwd|mm2-offsets|loadgen|secrets|version> [flags]",
		ShortHelp:   "MirrorMaker 2 as a service",
		Subcommands: []*ffcli.Command{serveCmd, migrateCmd, newHealthCommand(stdout, stderr), newPasswdCommand(os.Stdin, stdout, stderr), newMM2OffsetsCommand(stdout, stderr), newMirrorMakerCommand(stdout, stderr), newLoadgenCommand(stdout, stderr), newSecretsCommand(stdout, stderr), versionCmd},
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown command %q: use serve, mirror-maker, migrate, health, passwd, mm2-offsets, loadgen, secrets or version (see kmirror -h)", args[0])
			}
			return errors.New("missing command: use serve, mirror-maker, migrate, health, passwd, mm2-offsets, loadgen, secrets or version (see kmirror -h)")
		},
	}
	root.FlagSet = flag.NewFlagSet("kmirror", flag.ContinueOnError)
	root.FlagSet.SetOutput(stderr)
	return root.ParseAndRun(ctx, args)
}

func newServeCommand(stderr io.Writer) *ffcli.Command {
	fs := newFlagSet("kmirror serve", stderr)
	serve := registerServeFlags(fs, stderr)
	mm2 := registerMM2Flags(fs)
	return envCommand(fs, "serve", "kmirror serve [flags]",
		"run a kmirror worker: the Kafka Connect REST API and the replication runtime", func(ctx context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unexpected argument %q: serve takes flags only (an mm2.properties goes to --mm2-properties)", args[0])
			}
			m, err := mm2.load("")
			if err != nil {
				return err
			}
			return serve(ctx, m)
		})
}

// registerServeFlags registers a worker's flags on fs and returns what runs the worker, declaring the
// connectors of mm2 (nil: none) at start.
func registerServeFlags(fs *flag.FlagSet, stderr io.Writer) func(ctx context.Context, mm2 *server.MM2Properties) error {
	var g globals
	g.register(fs)
	listen := fs.String("listen", ":8083", "HTTP listen address of the REST API (KMIRROR_LISTEN)")
	workerID := fs.String("worker-id", "", "this worker's id in statuses; default: host:port of --advertised-url (KMIRROR_WORKER_ID)")
	advertised := fs.String("advertised-url", "", "URL other workers and clients use to reach this one; default http://<hostname>:<port> (KMIRROR_ADVERTISED_URL)")
	dbTimeout := fs.Duration("database-timeout", 30*time.Second, "how long to wait for an unreachable database at start-up (KMIRROR_DATABASE_TIMEOUT)")
	stopTimeout := fs.Duration("stop-timeout", tasks.DefaultStopTimeout, "soft-stop budget: on SIGTERM (and when a unit moves) tasks drain, flush and commit within it (KMIRROR_STOP_TIMEOUT)")
	workerTTL := fs.Duration("worker-ttl", tasks.DefaultWorkerTTL, "a worker whose heartbeats stop for this long is declared dead and its units move; its writes stop half of it earlier (KMIRROR_WORKER_TTL)")
	heartbeat := fs.Duration("heartbeat-interval", tasks.DefaultHeartbeatInterval, "how often a worker heartbeats and the leader renews its lease; at most a quarter of --worker-ttl (KMIRROR_HEARTBEAT_INTERVAL)")
	leaseTTL := fs.Duration("leader-lease-ttl", 0, "leader lease duration; default: --worker-ttl (KMIRROR_LEADER_LEASE_TTL)")
	eos := fs.String("exactly-once-source-support", "disabled", "Connect's exactly.once.source.support: disabled, preparing (same as disabled: kmirror has no config topic to prepare) or enabled (source tasks replicate in transactions, exactly once); every worker must agree (KMIRROR_EXACTLY_ONCE_SOURCE_SUPPORT)")
	pprofListen := fs.String("pprof-listen", "", "address of a net/http/pprof listener for profiling a running worker, e.g. 127.0.0.1:6060 (off when empty; never expose it) (KMIRROR_PPROF_LISTEN)")
	assignment := fs.String("task-assignment", string(source.AssignTopics), "how a source connector spreads partitions over its tasks unless its kmirror.task.assignment says, each task getting an even share (±1): topics (each topic on as few tasks as that allows, which keeps every task's clients small, then partitions moved between tasks by measured load so a hot topic still spreads) or partitions (MM2's round-robin spread: each topic over as many tasks as it has partitions, never moved) (KMIRROR_TASK_ASSIGNMENT)")
	dataPath := fs.String("data-path", "auto", "how source tasks move records: c (inside librdkafka's C API, Go keeping per-batch bookkeeping), go (every record through Go), or auto: c unless the task is exactly-once or its producer's linger.ms is 0 (KMIRROR_DATA_PATH)")
	consumerStats := fs.Int("consumer-stats-max-partitions", source.DefaultConsumerStatsMaxPartitions, "a source task's replication consumer that knows of more partitions than this (all partitions of each topic it reads) runs without librdkafka statistics, whose per-partition timers cost CPU in the square of that; its client series are then absent and Java's records-lag comes from kmirror's own sample; 0: no limit (KMIRROR_CONSUMER_STATS_MAX_PARTITIONS)")
	producerStats := fs.Int("producer-stats-max-partitions", source.DefaultProducerStatsMaxPartitions, "a source task's replication producer that knows of more partitions than this (all partitions of each remote topic it writes) runs without librdkafka statistics, whose every document carries all of them; its client series are then absent; 0: no limit (KMIRROR_PRODUCER_STATS_MAX_PARTITIONS)")
	security := registerSecurityFlags(fs)
	httpLimits := registerHTTPFlags(fs)
	history := fs.Int("config-history", store.DefaultHistoryKeep, "config versions (secrets included) kept per connector; all go when it is deleted (KMIRROR_CONFIG_HISTORY)")
	clientRules := registerClientRules(fs)
	loadSecrets := registerSecretsFlags(fs)
	return func(ctx context.Context, mm2 *server.MM2Properties) error {
		loggers, err := g.loggers(stderr)
		if err != nil {
			return err
		}
		rt := tasks.Config{StopTimeout: *stopTimeout, WorkerTTL: *workerTTL, HeartbeatInterval: *heartbeat, LeaseTTL: *leaseTTL}
		if err := rt.Validate(); err != nil {
			return err
		}
		eosSupport, err := mirrorconfig.ParseExactlyOnceSourceSupport(*eos)
		if err != nil {
			return fmt.Errorf("--exactly-once-source-support: %w", err)
		}
		data, err := source.ParseDataPath(*dataPath)
		if err != nil {
			return fmt.Errorf("--data-path: %w", err)
		}
		assign, err := source.ParseTaskAssignment(*assignment)
		if err != nil {
			return fmt.Errorf("--task-assignment: %w", err)
		}
		consumerLimit, err := statsLimitFlag("consumer-stats-max-partitions", *consumerStats)
		if err != nil {
			return err
		}
		producerLimit, err := statsLimitFlag("producer-stats-max-partitions", *producerStats)
		if err != nil {
			return err
		}
		if *history < 1 {
			return fmt.Errorf("--config-history must be at least 1, not %d", *history)
		}
		secrets, err := loadSecrets()
		if err != nil {
			return err
		}
		paceGC(data, eosSupport)
		if *pprofListen != "" {
			_, stopPprof, err := servePprof(ctx, *pprofListen)
			if err != nil {
				return err
			}
			defer stopPprof()
		}
		return server.Run(ctx, server.Config{
			Listen: *listen, DatabaseURL: g.databaseURL, WorkerID: *workerID, AdvertisedURL: *advertised,
			Loggers: loggers, DatabaseTimeout: *dbTimeout, Runtime: rt, HistoryKeep: *history,
			ExactlyOnceSource: eosSupport, DataPath: data, TaskAssignment: assign, ConsumerStatsMaxPartitions: consumerLimit,
			ProducerStatsMaxPartitions: producerLimit,
			Security:                   *security, HTTP: *httpLimits, Clients: clientRules(), Secrets: secrets, MM2: mm2,
		})
	}
}

func newMigrateCommand(stdout, stderr io.Writer) *ffcli.Command {
	fs := newFlagSet("kmirror migrate", stderr)
	var g globals
	g.register(fs)
	// withStore runs a subcommand against the database the flags name.
	withStore := func(run func(context.Context, *store.Store) error) func(context.Context, []string) error {
		return func(ctx context.Context, _ []string) error {
			loggers, err := g.loggers(stderr)
			if err != nil {
				return err
			}
			s, err := store.Open(ctx, g.databaseURL, loggers.Logger("kmirror.store"), store.OpenOptions{})
			if err != nil {
				return err
			}
			defer s.Close()
			return run(ctx, s)
		}
	}
	up := envCommand(fs, "up", "kmirror migrate up [flags]",
		"apply every pending migration", withStore(func(ctx context.Context, s *store.Store) error {
			n, err := s.Migrate(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "applied %d migration(s)\n", n)
			return nil
		}))
	status := envCommand(fs, "status", "kmirror migrate status [flags]",
		"show the schema version and pending migrations", withStore(func(ctx context.Context, s *store.Store) error {
			st, err := s.MigrationStatus(ctx)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "schema version %d of %d\n", st.Current, st.Latest)
			for _, p := range st.Pending {
				fmt.Fprintf(stdout, "pending: %s\n", p)
			}
			if st.Current > st.Latest {
				return fmt.Errorf("%w: run a newer kmirror", store.ErrSchemaTooNew)
			}
			return nil
		}))
	return &ffcli.Command{
		Name:        "migrate",
		ShortUsage:  "kmirror migrate <up|status> [flags]",
		ShortHelp:   "manage the database schema",
		Subcommands: []*ffcli.Command{up, status},
		Exec: func(_ context.Context, args []string) error {
			if len(args) > 0 {
				return fmt.Errorf("unknown subcommand %q: use migrate up or migrate status", args[0])
			}
			return errors.New("missing subcommand: use migrate up or migrate status")
		},
	}
}

// statsLimitFlag is server.Config's value for the statistics limit flag name set to n: 0 there means the default,
// so the flag's "no limit" (0) becomes -1.
func statsLimitFlag(name string, n int) (int, error) {
	switch {
	case n < 0:
		return 0, fmt.Errorf("--%s must be 0 (no limit) or more, not %d", name, n)
	case n == 0:
		return -1, nil
	}
	return n, nil
}
