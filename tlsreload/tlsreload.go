// Package tlsreload serves TLS with a certificate, and optionally a client CA bundle, re-read from their PEM
// files when these change, so that a renewed certificate (cert-manager, certbot, an operator's cp) takes
// effect without restarting kmirror and dropping its tasks.
//
// Every handshake asks for the configuration through tls.Config.GetConfigForClient, which returns the one
// built from the files as last read. A new version that does not load (a certificate written before its key,
// a truncated file) is logged and the previous one kept, so a rotation in two steps never leaves the listener
// without a certificate; the next change retries.
package tlsreload

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/kmirror/kmirror/filewatch"
)

// Config names the PEM files.
type Config struct {
	// CertFile holds the server's certificate chain, leaf first; KeyFile its private key. Both required.
	CertFile, KeyFile string
	// ClientCAFile, when set, holds the CAs a client certificate must chain to; clients without a valid one
	// are refused during the handshake.
	ClientCAFile string
	// Interval is how often the files are read for changes (filewatch.DefaultInterval when zero).
	Interval time.Duration
	// Logger receives reloads and failures. Nil discards them.
	Logger *slog.Logger
}

// Reloader holds the current TLS configuration.
type Reloader struct {
	cfg     Config
	log     *slog.Logger
	current atomic.Pointer[tls.Config]
	sum     [32]byte
}

// New loads the files; the error names the one that is wrong.
func New(cfg Config) (*Reloader, error) {
	if cfg.CertFile == "" || cfg.KeyFile == "" {
		return nil, errors.New("TLS needs both a certificate file and a key file")
	}
	r := &Reloader{cfg: cfg, log: cfg.Logger}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	contents, err := filewatch.Read(r.paths()...)
	if err != nil {
		return nil, fmt.Errorf("TLS: %w", err)
	}
	c, leaf, err := r.build(contents)
	if err != nil {
		return nil, err
	}
	r.current.Store(c)
	r.sum = filewatch.Sum(contents)
	r.logLoaded("loaded the TLS certificate", leaf)
	return r, nil
}

func (r *Reloader) paths() []string {
	p := []string{r.cfg.CertFile, r.cfg.KeyFile}
	if r.cfg.ClientCAFile != "" {
		p = append(p, r.cfg.ClientCAFile)
	}
	return p
}

func (r *Reloader) logLoaded(msg string, leaf *x509.Certificate) {
	r.log.Info(msg, "file", r.cfg.CertFile, "subject", leaf.Subject.String(), "dns_names", leaf.DNSNames,
		"not_after", leaf.NotAfter.UTC().Format(time.RFC3339), "client_ca", r.cfg.ClientCAFile)
	if time.Now().After(leaf.NotAfter) {
		r.log.Warn("the TLS certificate has expired: clients will refuse it", "file", r.cfg.CertFile,
			"not_after", leaf.NotAfter.UTC().Format(time.RFC3339))
	}
}

// build makes the configuration one handshake uses from the files' contents (cert, key, client CAs).
func (r *Reloader) build(contents [][]byte) (*tls.Config, *x509.Certificate, error) {
	pair, err := tls.X509KeyPair(contents[0], contents[1])
	if err != nil {
		return nil, nil, fmt.Errorf("TLS certificate %s with key %s: %w", r.cfg.CertFile, r.cfg.KeyFile, err)
	}
	c := &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: aeadSuites,
		Certificates: []tls.Certificate{pair},
		// The returned configuration replaces the listener's for the handshake, ALPN included: without these
		// HTTP/2 would never be negotiated.
		NextProtos: []string{"h2", "http/1.1"},
	}
	if r.cfg.ClientCAFile != "" {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(contents[2]) {
			return nil, nil, fmt.Errorf("TLS client CA file %s holds no PEM certificate", r.cfg.ClientCAFile)
		}
		c.ClientCAs = pool
		// A certificate, when given, must verify, or the handshake fails. Not giving one is allowed here so
		// that Kubernetes probes and load balancers, which present none, can reach /health: the server refuses
		// every other request without a verified certificate (server.requireClientCert).
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return c, pair.Leaf, nil
}

// RequiresClientCert reports whether the listener was configured with client CAs: its handler must then refuse
// requests that came without a verified client certificate (see build).
func (r *Reloader) RequiresClientCert() bool { return r.cfg.ClientCAFile != "" }

// aeadSuites are the TLS 1.2 suites served: forward-secret key exchange and authenticated encryption only. Go's
// defaults still offer CBC suites (ECDHE-ECDSA-AES128-SHA and others) for old clients; TLS 1.3 suites are
// Go's, all AEAD.
var aeadSuites = []uint16{
	tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	tls.TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	tls.TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
}

// TLSConfig is the configuration to serve with: each handshake gets the current certificate.
func (r *Reloader) TLSConfig() *tls.Config {
	return &tls.Config{
		MinVersion:   tls.VersionTLS12,
		CipherSuites: aeadSuites,
		NextProtos:   []string{"h2", "http/1.1"},
		GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			return r.current.Load(), nil
		},
	}
}

// Run re-reads the files whenever their bytes change, until ctx is done.
func (r *Reloader) Run(ctx context.Context) {
	filewatch.Reload(ctx, r.log, r.cfg.Interval, r.sum, r.paths(), func(contents [][]byte) error {
		c, leaf, err := r.build(contents)
		if err != nil {
			return err
		}
		r.current.Store(c)
		r.logLoaded("reloaded the TLS certificate", leaf)
		return nil
	}, "the TLS files changed but do not load; still serving the previous certificate",
		"cannot read the TLS files; still serving the previous certificate")
}
