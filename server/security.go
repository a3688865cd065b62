package server

import (
	"context"
	"errors"
	"fmt"
	stdlog "log"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/kmirror/kmirror/auth"
	"github.com/kmirror/kmirror/lograte"
	"github.com/kmirror/kmirror/tlsreload"
)

// Security is how the REST listener protects itself. The zero value serves plain HTTP without authentication,
// which Run accepts on a loopback listener only: on any other, authentication is off only when
// AllowUnauthenticated says so, and then with a warning.
type Security struct {
	// UsersFile enables authentication (basic and bearer, see package auth) with the users it lists.
	UsersFile string
	// AllowUnauthenticated lets a listener that other hosts can reach serve the API without authentication.
	AllowUnauthenticated bool
	// MetricsOpen serves GET /metrics without credentials, for Prometheus servers that cannot send any.
	// Otherwise /metrics needs a user or token of either role, like the rest of the API.
	MetricsOpen bool
	// TLSCert and TLSKey, both set, serve HTTPS instead of HTTP; TLSClientCA additionally requires a client
	// certificate issued by one of its CAs.
	TLSCert, TLSKey, TLSClientCA string
	// ReloadInterval is how often the users file and the TLS files are checked for changes (2 s when zero).
	ReloadInterval time.Duration
}

// security is Security put to work on one listener.
type security struct {
	authn *auth.Authenticator // nil: authentication is off
	tls   *tlsreload.Reloader // nil: plain HTTP
	open  func(*http.Request) bool
	log   *slog.Logger
}

func newSecurity(cfg Security, addr net.Addr, loggers *Loggers) (*security, error) {
	log := loggers.Logger("kmirror.server")
	s := &security{log: log, open: func(r *http.Request) bool {
		if !auth.Reads(r.Method) {
			return false
		}
		// The API answers a path with one trailing slash as the path without it.
		if isProbe(r) {
			return true // load balancers and Kubernetes probes send no credentials
		}
		switch r.URL.Path {
		case "/metrics", "/metrics/":
			return cfg.MetricsOpen
		}
		return false
	}}
	if cfg.TLSCert != "" || cfg.TLSKey != "" || cfg.TLSClientCA != "" {
		if cfg.TLSCert == "" || cfg.TLSKey == "" {
			return nil, errors.New("--tls-cert and --tls-key go together (and --tls-client-ca needs both)")
		}
		r, err := tlsreload.New(tlsreload.Config{CertFile: cfg.TLSCert, KeyFile: cfg.TLSKey, ClientCAFile: cfg.TLSClientCA,
			Interval: cfg.ReloadInterval, Logger: loggers.Logger("kmirror.tls")})
		if err != nil {
			return nil, err
		}
		s.tls = r
	}
	if cfg.UsersFile != "" {
		a, err := auth.New(auth.Config{UsersFile: cfg.UsersFile, ReloadInterval: cfg.ReloadInterval, Open: s.open,
			Logger: loggers.Logger("kmirror.auth")})
		if err != nil {
			return nil, err
		}
		s.authn = a
	}
	loopback := isLoopback(addr)
	switch {
	case s.authn == nil && !loopback && !cfg.AllowUnauthenticated:
		return nil, fmt.Errorf("the REST API would be open to anyone who reaches %s: set --rest-users-file (docs/security.md), "+
			"listen on a loopback address (--listen 127.0.0.1:%d), or pass --rest-allow-unauthenticated to serve it without authentication",
			addr.String(), port(addr))
	case s.authn == nil && !loopback:
		log.Warn("THE REST API IS OPEN TO ANYONE WHO REACHES "+addr.String()+": every connector's credentials can be read and "+
			"anything changed. Set --rest-users-file (and --tls-cert/--tls-key), or listen on 127.0.0.1 only.",
			"address", addr.String())
	case s.authn != nil && s.tls == nil && !loopback:
		log.Warn("REST passwords and tokens cross the network in clear text: set --tls-cert and --tls-key", "address", addr.String())
	}
	if cfg.MetricsOpen && s.authn != nil {
		log.Info("GET /metrics is served without credentials (--rest-metrics-open)")
	}
	return s, nil
}

// port is the listener's port, for messages.
func port(addr net.Addr) int {
	if tcp, ok := addr.(*net.TCPAddr); ok {
		return tcp.Port
	}
	return 8083
}

// isLoopback reports whether a listener accepts connections from this host only. An unspecified address
// (":8083", "0.0.0.0") accepts them from anywhere.
func isLoopback(addr net.Addr) bool {
	tcp, ok := addr.(*net.TCPAddr)
	return ok && tcp.IP.IsLoopback()
}

// authenticate wraps the whole listener: requests get a principal, or 401. With --tls-client-ca, a request
// without a verified client certificate gets 403 first, unless it is a probe's GET /health.
func (s *security) authenticate(next http.Handler) http.Handler {
	if s.authn == nil {
		next = auth.Unauthenticated(next)
	} else {
		next = s.authn.Authenticate(next)
	}
	if s.tls == nil || !s.tls.RequiresClientCert() {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if (r.TLS == nil || len(r.TLS.VerifiedChains) == 0) && !isProbe(r) {
			// The handshake succeeded without a client certificate, which only /health accepts.
			auth.WriteForbidden(w, "A client certificate issued by a CA of --tls-client-ca is required; only GET /health is served without one")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// headers sets what every response says about itself: no content sniffing (a JSON body holding a name an
// attacker chose is never run as HTML or script), and over HTTPS that the browser must keep using HTTPS
// (HSTS, for a year; not for subdomains, which kmirror does not own).
func (s *security) headers(next http.Handler) http.Handler {
	hsts := s.tls != nil
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		if hsts {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		next.ServeHTTP(w, r)
	})
}

// isProbe reports whether r is a health probe, which needs no credentials of any kind.
func isProbe(r *http.Request) bool {
	return auth.Reads(r.Method) && (r.URL.Path == "/health" || r.URL.Path == "/health/")
}

// authorize wraps the REST API's handler, which the dashboard calls in-process with the browser request's
// context: a read-only user meets the same 403 through a dashboard button as through curl.
func (s *security) authorize(next http.Handler) http.Handler {
	return auth.Authorize(s.open)(next)
}

func (s *security) scheme() string {
	if s.tls != nil {
		return "https"
	}
	return "http"
}

// serve serves srv on ln, over TLS when it is configured.
func (s *security) serve(srv *http.Server, ln net.Listener) error {
	srv.ErrorLog = stdlog.New(&httpErrorLog{log: s.log, limit: lograte.New(time.Minute, lograte.WithMaxKeys(64))}, "", 0)
	var err error
	if s.tls != nil {
		srv.TLSConfig = s.tls.TLSConfig()
		err = srv.ServeTLS(ln, "", "")
	} else {
		err = srv.Serve(ln)
	}
	if !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve %s: %w", s.scheme(), err)
	}
	return nil
}

// run re-reads the users file and the TLS files as they change, until ctx is done.
func (s *security) run(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		if s.tls != nil {
			s.tls.Run(ctx)
		}
	}()
	if s.authn != nil {
		s.authn.Run(ctx)
	}
	<-ctx.Done()
	<-done
}

// httpErrorLog turns net/http's own error lines — mostly TLS handshakes that failed — into log records, at
// most one a minute per kind, instead of raw lines on stderr that --log-format json cannot parse. A client
// that sends no certificate to a --tls-client-ca listener, or distrusts the server's, is worth a warning; a
// TCP health check that closes without a handshake ("EOF") is not.
type httpErrorLog struct {
	log   *slog.Logger
	limit *lograte.Limiter
}

func (h *httpErrorLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	// "http: TLS handshake error from 10.0.0.7:51234: remote error: tls: bad certificate": one kind whatever
	// the client's address.
	key := msg
	if before, rest, ok := strings.Cut(msg, " from "); ok {
		if _, after, ok := strings.Cut(rest, ": "); ok {
			key = before + ": " + after
		}
	}
	level := slog.LevelWarn
	if strings.HasSuffix(msg, ": EOF") {
		level = slog.LevelDebug
	}
	h.limit.Log(context.Background(), h.log, level, key, "HTTP server error", "error", msg)
	return len(p), nil
}
