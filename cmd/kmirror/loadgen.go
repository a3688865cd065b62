package main

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"

	"github.com/kmirror/kmirror/loadgen"
)

// newLoadgenCommand is `kmirror loadgen`: a steady stream of records into a topic, so that a demo (or an operator
// trying kmirror out) has something to replicate.
func newLoadgenCommand(stdout, stderr io.Writer) *ffcli.Command {
	fs := newFlagSet("kmirror loadgen", stderr)
	var cfg loadgen.Config
	fs.StringVar(&cfg.Bootstrap, "bootstrap-servers", "127.0.0.1:19092", "the source cluster to produce into")
	fs.StringVar(&cfg.Topic, "topic", "orders", "topic to produce into (created if missing)")
	fs.IntVar(&cfg.Partitions, "partitions", 3, "partitions of the topic when it is created")
	fs.Float64Var(&cfg.Rate, "rate", 100, "records per second")
	fs.IntVar(&cfg.ValueSize, "value-size", 100, "bytes per record value")
	fs.StringVar(&cfg.Group, "group", "", "also commit, every second, the produced end of each partition as this consumer group's offsets (a group for the checkpoint connector to translate)")
	every := fs.Duration("report", 10*time.Second, "how often to print the records sent so far (0: never)")
	return &ffcli.Command{
		Name:       "loadgen",
		ShortUsage: "kmirror loadgen [--bootstrap-servers HOST:PORT] [--topic T] [--rate N]",
		ShortHelp:  "produce a steady stream of records into a topic (for demos and tests)",
		FlagSet:    fs,
		Exec: func(ctx context.Context, _ []string) error {
			cfg.Logger = slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
			var stats loadgen.Stats
			if *every > 0 {
				go stats.PrintEvery(ctx, stdout, *every)
			}
			return loadgen.Run(ctx, cfg, &stats)
		},
	}
}
