package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/peterbourgon/ff/v3/ffcli"
	"golang.org/x/term"

	"github.com/kmirror/kmirror/auth"
	"github.com/kmirror/kmirror/server"
)

// registerSecurityFlags declares serve's authentication and TLS flags; the returned value is filled once fs
// is parsed.
func registerSecurityFlags(fs *flag.FlagSet) *server.Security {
	s := &server.Security{}
	fs.StringVar(&s.UsersFile, "rest-users-file", "", "users file (name:role:hash lines, see kmirror passwd): enables REST basic and bearer authentication; re-read when it changes (KMIRROR_REST_USERS_FILE)")
	fs.BoolVar(&s.AllowUnauthenticated, "rest-allow-unauthenticated", false, "serve the REST API without authentication on a listener other hosts can reach (logged as a warning); without it such a listener needs --rest-users-file (KMIRROR_REST_ALLOW_UNAUTHENTICATED)")
	fs.BoolVar(&s.MetricsOpen, "rest-metrics-open", false, "serve GET /metrics without credentials, for scrapers that cannot send any (KMIRROR_REST_METRICS_OPEN)")
	fs.StringVar(&s.TLSCert, "tls-cert", "", "PEM certificate chain: serve HTTPS; re-read when it changes (KMIRROR_TLS_CERT)")
	fs.StringVar(&s.TLSKey, "tls-key", "", "PEM private key of --tls-cert (KMIRROR_TLS_KEY)")
	fs.StringVar(&s.TLSClientCA, "tls-client-ca", "", "PEM CA bundle: require a client certificate issued by one of these CAs (KMIRROR_TLS_CLIENT_CA)")
	return s
}

// registerHTTPFlags declares serve's limits on the REST listener's timeouts and connections.
func registerHTTPFlags(fs *flag.FlagSet) *server.HTTPLimits {
	l := &server.HTTPLimits{}
	fs.DurationVar(&l.ReadHeaderTimeout, "rest-read-header-timeout", server.DefaultReadHeaderTimeout, "how long a REST request's headers may take to arrive (KMIRROR_REST_READ_HEADER_TIMEOUT)")
	fs.DurationVar(&l.ReadTimeout, "rest-read-timeout", server.DefaultReadTimeout, "how long a whole REST request, body included, may take to arrive (KMIRROR_REST_READ_TIMEOUT)")
	fs.DurationVar(&l.WriteTimeout, "rest-write-timeout", server.DefaultWriteTimeout, "how long a REST request may take from its headers to the end of its answer; above the slowest answer (a Kafka admin call, 60 s; tasks stopping, --stop-timeout) (KMIRROR_REST_WRITE_TIMEOUT)")
	fs.DurationVar(&l.IdleTimeout, "rest-idle-timeout", server.DefaultIdleTimeout, "an idle keep-alive connection to the REST API is closed after this long (KMIRROR_REST_IDLE_TIMEOUT)")
	fs.IntVar(&l.MaxConnections, "rest-max-connections", server.DefaultMaxConnections, "connections to the REST API served at once; more wait until one closes (KMIRROR_REST_MAX_CONNECTIONS)")
	return l
}

// newPasswdCommand prints users-file lines: a password's hash, or a new bearer token's.
func newPasswdCommand(stdin io.Reader, stdout, stderr io.Writer) *ffcli.Command {
	fs := newFlagSet("kmirror passwd", stderr)
	role := fs.String("role", "read-only", "the user's role: admin or read-only")
	scheme := fs.String("scheme", string(auth.Bcrypt), "password hash: bcrypt or argon2id")
	token := fs.Bool("token", false, "make a bearer token instead of hashing a password: the token goes to stderr, once")
	return &ffcli.Command{
		Name:       "passwd",
		ShortUsage: "kmirror passwd [--role admin|read-only] [--scheme bcrypt|argon2id] [--token] NAME",
		ShortHelp:  "print a users-file line for NAME: the password read from stdin, hashed, or a new bearer token",
		LongHelp: "Reads the password from the terminal (twice), or the first line of stdin, and prints the line to append to\n" +
			"--rest-users-file:\n\n" +
			"  printf '%s\\n' 's3cret' | kmirror passwd --role admin alice >> users\n" +
			"  kmirror passwd --token --role read-only prometheus >> users 2> prometheus.token",
		FlagSet: fs,
		Exec: func(_ context.Context, args []string) error {
			if len(args) != 1 {
				return errors.New("kmirror passwd takes one NAME, e.g. kmirror passwd --role admin alice")
			}
			r, err := auth.ParseRole(*role)
			if err != nil {
				return fmt.Errorf("--role: %w", err)
			}
			var hash string
			if *token {
				var t string
				if t, hash, err = auth.NewToken(); err != nil {
					return err
				}
				fmt.Fprintf(stderr, "%s\n", t)
			} else {
				password, err := readPassword(stdin, stderr)
				if err != nil {
					return err
				}
				if hash, err = auth.HashPassword(password, auth.Scheme(*scheme)); err != nil {
					return fmt.Errorf("hash the password: %w", err)
				}
			}
			line, err := auth.Entry(args[0], r, hash)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, line)
			return nil
		},
	}
}

// readPassword asks twice, without echo, on a terminal; otherwise it reads the first line of stdin, so a
// script can pipe the password in.
func readPassword(stdin io.Reader, prompt io.Writer) (string, error) {
	if f, ok := stdin.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
		fmt.Fprint(prompt, "Password: ")
		first, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		fmt.Fprint(prompt, "Again: ")
		second, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(prompt)
		if err != nil {
			return "", fmt.Errorf("read the password: %w", err)
		}
		if string(first) != string(second) {
			return "", errors.New("the passwords differ")
		}
		return string(first), nil
	}
	line, err := bufio.NewReader(stdin).ReadString('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("read the password from stdin: %w", err)
	}
	line = strings.TrimRight(line, "\r\n")
	if line == "" {
		return "", errors.New("no password on stdin: pipe one in, e.g. printf '%s\\n' 's3cret' | kmirror passwd NAME")
	}
	return line, nil
}
