package server

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"time"

	"golang.org/x/net/netutil"
)

// HTTPLimits bound what one client can hold of the REST listener: how long a request may take to arrive and
// to be answered, how long an idle keep-alive connection stays open, and how many connections are served at
// once. Zero fields take the defaults below.
type HTTPLimits struct {
	// ReadHeaderTimeout bounds the arrival of a request's headers (a client that trickles them in holds a
	// connection for nothing).
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the arrival of a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds a request from its headers to the end of its answer. It must exceed the slowest
	// legitimate answer: a request that waits on a Kafka admin call (60 s) or on tasks stopping (the stop
	// timeout, 30 s by default).
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that has carried no request for this long.
	IdleTimeout time.Duration
	// MaxConnections caps the connections served at once; more wait to be accepted until one closes.
	MaxConnections int
}

// The defaults of HTTPLimits.
const (
	DefaultReadHeaderTimeout = 10 * time.Second
	DefaultReadTimeout       = time.Minute
	DefaultWriteTimeout      = 5 * time.Minute
	DefaultIdleTimeout       = time.Minute
	DefaultMaxConnections    = 1024
)

// withDefaults fills the zero fields and refuses negative ones.
func (l HTTPLimits) withDefaults() (HTTPLimits, error) {
	for name, d := range map[string]time.Duration{"--rest-read-header-timeout": l.ReadHeaderTimeout, "--rest-read-timeout": l.ReadTimeout,
		"--rest-write-timeout": l.WriteTimeout, "--rest-idle-timeout": l.IdleTimeout} {
		if d < 0 {
			return l, fmt.Errorf("%s must not be negative, not %s", name, d)
		}
	}
	if l.MaxConnections < 0 {
		return l, fmt.Errorf("--rest-max-connections must not be negative, not %d", l.MaxConnections)
	}
	l.ReadHeaderTimeout = cmp.Or(l.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	l.ReadTimeout = cmp.Or(l.ReadTimeout, DefaultReadTimeout)
	l.WriteTimeout = cmp.Or(l.WriteTimeout, DefaultWriteTimeout)
	l.IdleTimeout = cmp.Or(l.IdleTimeout, DefaultIdleTimeout)
	l.MaxConnections = cmp.Or(l.MaxConnections, DefaultMaxConnections)
	return l, nil
}

// server returns an http.Server for handler under the limits, and ln capped at MaxConnections.
func (l HTTPLimits) server(handler http.Handler, ln net.Listener) (*http.Server, net.Listener) {
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: l.ReadHeaderTimeout, ReadTimeout: l.ReadTimeout,
		WriteTimeout: l.WriteTimeout, IdleTimeout: l.IdleTimeout}
	return srv, netutil.LimitListener(ln, l.MaxConnections)
}
