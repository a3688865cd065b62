package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// newHealthCommand checks a worker's /health endpoint, so container health checks need no curl in the image.
func newHealthCommand(stdout, stderr io.Writer) *ffcli.Command {
	fs := flag.NewFlagSet("kmirror health", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:8083/health", "health endpoint to check")
	timeout := fs.Duration("timeout", 11*time.Second, "how long to wait for an answer")
	return &ffcli.Command{
		Name:       "health",
		ShortUsage: "kmirror health [--url URL]",
		ShortHelp:  "exit 0 if the worker at URL reports healthy",
		FlagSet:    fs,
		Exec: func(ctx context.Context, _ []string) error {
			ctx, cancel := context.WithTimeout(ctx, *timeout)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, *url, nil)
			if err != nil {
				return fmt.Errorf("invalid --url: %w", err)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				return fmt.Errorf("check health: %w", err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			fmt.Fprintf(stdout, "%s %s\n", resp.Status, body)
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("worker is not healthy: %s", resp.Status)
			}
			return nil
		},
	}
}
