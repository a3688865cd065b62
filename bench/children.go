package main

// The subcommands the bench runs as child processes of itself, so that each system under test is measured
// the same way (its own PID's CPU time and peak RSS).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	_ "net/http/pprof" // the pipe's profiling endpoint
	"os"
	"os/signal"
	"runtime/debug"
	"sync"
	"syscall"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
)

// pipeConfig is what the orchestrator hands the pipe subcommand (as a JSON file).
type pipeConfig struct {
	Consumer  map[string]string `json:"consumer"`
	Producer  map[string]string `json:"producer"`
	Target    string            `json:"target"`
	Topics    map[string]int    `json:"topics"`
	Remote    map[string]string `json:"remote"`
	Workers   int               `json:"workers"`
	StatsFile string            `json:"stats_file,omitempty"`
	Pprof     string            `json:"pprof,omitempty"` // net/http/pprof address, for profiling runs
}

// pipeMain runs the bare librdkafka consume-and-produce loop until SIGTERM.
func pipeMain(args []string) error {
	fs := flag.NewFlagSet("pipe", flag.ContinueOnError)
	path := fs.String("config", "", "pipe config (JSON)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	b, err := os.ReadFile(*path)
	if err != nil {
		return err
	}
	var cfg pipeConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fmt.Errorf("%s: %w", *path, err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	if cfg.Pprof != "" {
		go servePprof(cfg.Pprof)
	}
	// kmirror serve's garbage-collection pace (cmd/kmirror), so that both Go processes are paced alike.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	pc := kafkabench.PipeConfig{Consumer: cfg.Consumer, Producer: cfg.Producer, Target: cfg.Target, Topics: cfg.Topics,
		Remote: cfg.Remote, Workers: cfg.Workers}
	if cfg.StatsFile != "" {
		f, err := os.Create(cfg.StatsFile)
		if err != nil {
			return err
		}
		defer f.Close()
		var mu sync.Mutex
		pc.OnStats = func(worker int, role, js string) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(f, "{\"worker\":%d,\"role\":%q,\"stats\":%s}\n", worker, role, js)
		}
	}
	return kafkabench.Pipe(ctx, pc)
}

func servePprof(addr string) {
	srv := &http.Server{Addr: addr, Handler: http.DefaultServeMux, ReadHeaderTimeout: 10 * time.Second}
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		fmt.Fprintln(os.Stderr, "pprof:", err)
	}
}
