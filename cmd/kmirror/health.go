package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/peterbourgon/ff/v3/ffcli"
)

// newHealthCommand checks a worker's /health endpoint, so container health checks need no curl in the image.
// Without --url it checks the worker of this container: the port of --listen on loopback, over HTTPS when
// --tls-cert is set, both read from the same KMIRROR_* variables `kmirror serve` reads, so one HEALTHCHECK
// works with and without TLS.
func newHealthCommand(stdout, stderr io.Writer) *ffcli.Command {
	fs := newFlagSet("kmirror health", stderr)
	url := fs.String("url", "", "health endpoint to check; default: this host's worker, from --listen and --tls-cert")
	listen := fs.String("listen", ":8083", "the worker's listen address, when --url is not given (KMIRROR_LISTEN)")
	tlsCert := fs.String("tls-cert", "", "the worker's certificate (PEM), when --url is not given: the check uses HTTPS and trusts exactly that certificate (KMIRROR_TLS_CERT)")
	timeout := fs.Duration("timeout", 11*time.Second, "how long to wait for an answer")
	return envCommand(fs, "health", "kmirror health [--url URL]",
		"exit 0 if the worker at URL reports healthy", func(ctx context.Context, _ []string) error {
			ctx, cancel := context.WithTimeout(ctx, *timeout)
			defer cancel()
			client := http.DefaultClient
			target := *url
			if target == "" {
				var err error
				if target, client, err = ownWorker(*listen, *tlsCert); err != nil {
					return err
				}
			}
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
			if err != nil {
				return fmt.Errorf("invalid --url: %w", err)
			}
			resp, err := client.Do(req)
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
		})
}

// ownWorker is the /health URL of the worker listening on listen on this host, and a client for it. With a
// certificate file the client speaks HTTPS and accepts exactly the certificate in that file, whatever names it
// holds: the check dials loopback, which a certificate for the service's DNS name rarely lists.
func ownWorker(listen, certFile string) (string, *http.Client, error) {
	_, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", nil, fmt.Errorf("invalid --listen %q: %w", listen, err)
	}
	host := "127.0.0.1"
	if h, _, _ := net.SplitHostPort(listen); h != "" {
		if ip := net.ParseIP(h); ip == nil || !ip.IsUnspecified() {
			host = h // a listener bound to one address is reached there
		}
	}
	addr := net.JoinHostPort(host, port)
	if certFile == "" {
		return "http://" + addr + "/health", http.DefaultClient, nil
	}
	leaf, err := firstCertificate(certFile)
	if err != nil {
		return "", nil, err
	}
	pinned := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// Names are not checked; the certificate itself is, byte for byte, in VerifyPeerCertificate.
		InsecureSkipVerify: true, //nolint:gosec // replaced by the pin below
		VerifyPeerCertificate: func(raw [][]byte, _ [][]*x509.Certificate) error {
			if len(raw) == 0 || !bytes.Equal(raw[0], leaf) {
				return errors.New("the worker presents another certificate than " + certFile)
			}
			return nil
		},
	}
	return "https://" + addr + "/health", &http.Client{Transport: &http.Transport{TLSClientConfig: pinned}}, nil
}

// firstCertificate is the DER of the first certificate in a PEM file: the leaf, as --tls-cert holds it.
func firstCertificate(file string) ([]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("read --tls-cert: %w", err)
	}
	for {
		var b *pem.Block
		if b, data = pem.Decode(data); b == nil {
			return nil, fmt.Errorf("--tls-cert %s holds no PEM certificate", file)
		}
		if b.Type == "CERTIFICATE" {
			return b.Bytes, nil
		}
	}
}
