package server

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"golang.org/x/sync/errgroup"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/auth"
	"github.com/kmirror/kmirror/connectors"
	"github.com/kmirror/kmirror/connectors/checkpoint"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/heartbeat"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/source"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/store"
	"github.com/kmirror/kmirror/tasks"
	"github.com/kmirror/kmirror/web"
)

// Config is everything `kmirror serve` needs.
type Config struct {
	Listen        string // HTTP listen address, e.g. ":8083"
	DatabaseURL   string
	WorkerID      string // defaults to the advertised host:port
	AdvertisedURL string // how other workers and clients reach this one; defaults from Listen and the hostname
	Loggers       *Loggers
	// Security is REST authentication and TLS (security.go); the zero value serves plain HTTP to anyone.
	Security Security
	// HTTP bounds the REST listener's timeouts and connections (http_limits.go); zero fields take defaults.
	HTTP HTTPLimits

	// DatabaseTimeout bounds how long start-up waits for an unreachable database (30s when zero).
	DatabaseTimeout time.Duration
	// HistoryKeep is how many config versions the store keeps per connector (store.DefaultHistoryKeep when zero).
	HistoryKeep int
	// ExactlyOnceSource is the worker's exactly.once.source.support: with "enabled" source tasks replicate in
	// transactions (connectors/source/transactions.go). Zero is disabled. Every worker of a cluster must agree.
	ExactlyOnceSource mirrorconfig.ExactlyOnceSourceSupport
	// DataPath is how source tasks move records: source.DataPathAuto (the default, also when empty),
	// DataPathC (records move in C; see connectors/source/cpath.go) or DataPathGo.
	DataPath source.DataPath
	// TaskAssignment is how source connectors spread partitions over their tasks unless their config says:
	// source.AssignTopics (the default, also when empty: even, grouped by topic, moved by measured load) or
	// source.AssignPartitions (MM2's spread).
	TaskAssignment source.TaskAssignment
	// ConsumerStatsMaxPartitions: a source task's replication consumer knowing of more partitions runs without
	// librdkafka statistics (source.DefaultConsumerStatsMaxPartitions, the default when zero, says why);
	// negative: no limit.
	ConsumerStatsMaxPartitions int
	// ProducerStatsMaxPartitions is ConsumerStatsMaxPartitions for the replication producer
	// (source.DefaultProducerStatsMaxPartitions says why).
	ProducerStatsMaxPartitions int
	// Clients are the rules for the files and config providers connector configs may use.
	Clients ClientRules
	// Secrets, when set, encrypts connector config secrets at rest (see LoadSecrets).
	Secrets *store.Secrets
	// Runtime tunes the task runtime; WorkerID, URL, Store, Registry and Logger are filled in by Run.
	Runtime tasks.Config
	// MM2, when set, is an mm2.properties whose connectors are declared at start, before the REST API serves.
	MM2 *MM2Properties
	// Ready, when set, receives the bound listen address once the server accepts requests (for tests).
	Ready func(addr string)
}

// Run starts kmirror — database, migrations, task runtime and REST API — and serves until ctx is done. It then
// stops accepting requests, stops every task softly (drain, flush, commit), and returns once all has stopped.
func Run(ctx context.Context, cfg Config) error {
	log := cfg.Loggers.Logger("kmirror.server")
	limits, err := cfg.HTTP.withDefaults()
	if err != nil {
		return err
	}
	clients, err := cfg.Clients.options(log, cfg.Loggers.Hidden())
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	defer ln.Close()
	sec, err := newSecurity(cfg.Security, ln.Addr(), cfg.Loggers)
	if err != nil {
		return err
	}
	if cfg.AdvertisedURL == "" {
		cfg.AdvertisedURL = defaultAdvertisedURL(sec.scheme(), ln.Addr())
	}
	if cfg.WorkerID == "" {
		u, err := url.Parse(cfg.AdvertisedURL)
		if err != nil || u.Host == "" {
			return fmt.Errorf("advertised URL %q is not a URL like http://host:8083", cfg.AdvertisedURL)
		}
		cfg.WorkerID = u.Host
	}

	st, err := store.Open(ctx, cfg.DatabaseURL, cfg.Loggers.Logger("kmirror.store"), store.OpenOptions{ConnectTimeout: cfg.DatabaseTimeout, HistoryKeep: cfg.HistoryKeep,
		Secrets: cfg.Secrets, IsSecret: clientconfig.IsSecret, Hide: cfg.Loggers.Hidden().String})
	if err != nil {
		return err
	}
	defer st.Close()
	applied, err := st.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("migrate database: %w", err)
	}
	if applied > 0 {
		log.Info("applied database migrations", "count", applied)
	}
	if err := st.CheckSecrets(ctx); err != nil {
		return err
	}
	if cfg.Secrets == nil {
		log.Warn(SecretsInClear)
	}
	clusterID, err := st.ClusterID(ctx)
	if err != nil {
		return err
	}
	if cfg.MM2 != nil {
		if err := declare(ctx, st, cfg.MM2, cfg.ExactlyOnceSource, clients, log); err != nil {
			return err
		}
	}

	// One metrics registry per process: the runtime reports unit states into it, the connectors their
	// partitions, checkpoints and clients, and GET /metrics serves it.
	metricsReg := metrics.New()
	metricsReg.SetVerdictSource(parallelismVerdicts(st))
	rtCfg := cfg.Runtime
	rtCfg.WorkerID, rtCfg.URL, rtCfg.Store = cfg.WorkerID, cfg.AdvertisedURL, st
	mirrorSource := source.New(cfg.Loggers.Logger("kmirror.connectors"), metricsReg).WithExactlyOnceSource(cfg.ExactlyOnceSource).
		WithDataPath(cfg.DataPath).WithTaskAssignment(cfg.TaskAssignment).
		WithConsumerStatsLimit(statsLimit(cfg.ConsumerStatsMaxPartitions, source.DefaultConsumerStatsMaxPartitions)).
		WithProducerStatsLimit(statsLimit(cfg.ProducerStatsMaxPartitions, source.DefaultProducerStatsMaxPartitions))
	rtCfg.Registry = connectors.NewRegistry(cfg.Loggers.Logger, clients, mirrorSource, checkpoint.New(metricsReg), heartbeat.Plugin{})
	rtCfg.Logger = cfg.Loggers.Logger("kmirror.tasks")
	rtCfg.Observer = metricsReg
	rt := tasks.New(rtCfg)

	router := chi.NewRouter()
	// Every worker serves its own series: Prometheus scrapes each one.
	router.Method(http.MethodGet, "/metrics", metricsReg.Handler())
	restAPI := metricsReg.HTTPMiddleware(apiRoute())(sec.authorize(api.New(api.Config{
		Store: st,
		Info: func(context.Context) (api.ServerInfo, error) {
			return api.ServerInfo{Version: ConnectVersion, Commit: Commit(), ClusterID: clusterID}, nil
		},
		Health:  healthCheck(st, rt),
		Loggers: cfg.Loggers,
		Logger:  cfg.Loggers.Logger("kmirror.api"),

		ExactlyOnceSource: cfg.ExactlyOnceSource,
		Clients:           clients,
	})))
	router.Mount("/", restAPI)
	// The dashboard renders the REST API's answers, calling its handler in-process.
	dashboard, err := web.New(web.Config{API: restAPI, Logger: cfg.Loggers.Logger("kmirror.web"), CanWrite: func(r *http.Request) bool {
		p, ok := auth.FromContext(r.Context())
		return !ok || p.Role == auth.RoleAdmin // without a principal nothing ran the authentication: as the API, allow
	}})
	if err != nil {
		return err
	}
	router.Handle(web.Prefix, http.RedirectHandler(web.Prefix+"/", http.StatusMovedPermanently))
	router.Handle(web.Prefix+"/*", dashboard)
	srv, limited := limits.server(sec.headers(sec.authenticate(router)), ln)

	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		log.Info("serving the Kafka Connect REST API", "address", ln.Addr().String(), "scheme", sec.scheme(), "worker_id", cfg.WorkerID,
			"advertised_url", cfg.AdvertisedURL, "version", Version)
		if cfg.Ready != nil {
			cfg.Ready(ln.Addr().String())
		}
		return sec.serve(srv, limited)
	})
	g.Go(func() error {
		<-gctx.Done()
		// The HTTP server drains within the same budget as the tasks, which stop meanwhile.
		shutdownCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cmp.Or(cfg.Runtime.StopTimeout, tasks.DefaultStopTimeout))
		defer cancel()
		return srv.Shutdown(shutdownCtx)
	})
	g.Go(func() error { return rt.Run(gctx) })
	g.Go(func() error { return runFailovers(gctx, st, clients, cfg) })
	g.Go(func() error {
		sec.run(gctx)
		return nil
	})
	g.Go(func() error {
		applyClusterLoggerLevels(gctx, st, cfg.Loggers, log)
		return nil
	})
	err = g.Wait()
	log.Info("stopped")
	return err
}

// apiRoute names a request's API route pattern ("/connectors/{connector}/status") for the REST metrics, so
// their cardinality is the route table's. The API routes every request afresh on its escaped path (it drops
// an enclosing router's context), so the pattern is looked up in a copy of its route table, the same way;
// requests that match no route are "unmatched".
func apiRoute() func(*http.Request) string {
	table := chi.NewRouter()
	noop := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {})
	for _, rt := range api.Routes() {
		table.Method(rt.Method, rt.Pattern, noop)
	}
	return func(r *http.Request) string {
		path := r.URL.EscapedPath()
		if len(path) > 1 && strings.HasSuffix(path, "/") {
			path = path[:len(path)-1]
		}
		method := r.Method
		if method == http.MethodHead {
			method = http.MethodGet
		}
		if p := table.Find(chi.NewRouteContext(), method, cmp.Or(path, "/")); p != "" {
			return p
		}
		return "unmatched"
	}
}

var _ tasks.Observer = (*metrics.Registry)(nil)

func defaultAdvertisedURL(scheme string, addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		if h, err := os.Hostname(); err == nil && h != "" {
			host = h
		} else {
			host = "localhost"
		}
	}
	p, _ := strconv.Atoi(port)
	return fmt.Sprintf("%s://%s", scheme, net.JoinHostPort(host, strconv.Itoa(p)))
}

// healthCheck answers GET /health in KIP-1017's terms: starting until the runtime has joined the cluster,
// unhealthy when the database does not answer within Connect's 10 s, healthy otherwise.
func healthCheck(st *store.Store, rt *tasks.Runtime) func(ctx context.Context) api.Health {
	return func(ctx context.Context) api.Health {
		if !rt.Ready() {
			return api.Health{Code: http.StatusServiceUnavailable, Status: "starting",
				Message: "Worker is still starting up."}
		}
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := st.Ping(ctx); err != nil {
			// Only the cause, not err: pgx's text names the database's host, port, user and name, and /health
			// is what load balancers and dashboards poll. The runtime logs the database's failures.
			return api.UnhealthyDatabase(err)
		}
		return api.Health{Code: http.StatusOK, Status: "healthy",
			Message: "Worker has completed startup and is ready to handle requests."}
	}
}

// applyClusterLoggerLevels applies logger levels set with scope=cluster on any worker to this one.
func applyClusterLoggerLevels(ctx context.Context, st *store.Store, loggers *Loggers, log *slog.Logger) {
	ticker := time.NewTicker(3 * time.Second)
	defer ticker.Stop()
	var applied int64
	limit := lograte.New(time.Minute)
	for {
		levels, err := st.LoggerLevels(ctx)
		if err != nil && ctx.Err() == nil {
			limit.Log(ctx, log, slog.LevelWarn, "levels", "read cluster logger levels", "error", err)
		}
		threshold := applied
		for _, l := range levels {
			if l.LastModified > threshold {
				if _, err := loggers.SetAt(l.Logger, l.Level, l.LastModified); err != nil {
					log.Warn("apply cluster logger level", "logger", l.Logger, "error", err)
				}
				applied = max(applied, l.LastModified)
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// statsLimit is the Registry's limit for Config.ConsumerStatsMaxPartitions or ProducerStatsMaxPartitions n, whose
// default is def.
func statsLimit(n, def int) int {
	switch {
	case n == 0:
		return def
	case n < 0:
		return 0 // no limit
	}
	return n
}
