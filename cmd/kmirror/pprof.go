package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// servePprof serves net/http/pprof on addr until ctx ends, for profiling a worker as it runs (the bench's
// -pprof). It is a listener of its own, off by default and never the REST API's: profiles show internals and
// a CPU profile costs the worker while it runs.
// It returns the address it listens on and a stop that returns once the listener is closed.
func servePprof(ctx context.Context, addr string) (net.Addr, func(), error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("listen for pprof on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(ln) // ErrServerClosed at stop; any other error only means no profiles: the worker goes on
	}()
	stopServer := context.AfterFunc(ctx, func() { _ = srv.Close() })
	return ln.Addr(), func() {
		stopServer()
		_ = srv.Close()
		<-done
	}, nil
}
