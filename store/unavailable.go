package store

import (
	"context"
	"errors"
	"io"
	"net"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// IsUnavailable reports whether err means that the database cannot be reached right now, as opposed to a
// request it refused or a bug: no connection could be opened (refused, unresolvable host, too many clients,
// even bad credentials — whatever the reason, no query can run), a connection broke (reset, EOF, closed by the
// driver, PostgreSQL's connection-exception class 08), the server is shutting down or starting (57P01 admin
// shutdown, 57P02 crash shutdown, 57P03 cannot connect now), the database did not answer in time (a timeout
// inside pgconn, or a deadline that expired while waiting for a pooled connection), or the Store is closed.
//
// Callers use it to tell clients to come back later instead of reporting an internal error, and to keep such
// errors' texts, which name the database's host, port, user and database name, out of their answers.
// context.Canceled is not unavailability: it is the caller giving up.
func IsUnavailable(err error) bool {
	// Checked first because pgconn reports a context that was already done as a timeout, cancelled or not.
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	var connectErr *pgconn.ConnectError
	if errors.As(err, &connectErr) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// A server error decides on its own: a query error (syntax, constraint) wrapped around nothing else is
		// not an outage, and the checks below must not guess otherwise.
		return unavailableCode(pgErr.Code)
	}
	var netErr net.Error
	switch {
	case errors.As(err, &netErr),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF),
		errors.Is(err, pgconn.ErrConnClosed),
		pgconn.Timeout(err),
		errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, puddle.ErrClosedPool):
		return true
	}
	return false
}

// unavailableCode reports whether a PostgreSQL SQLSTATE means the connection or the server went away.
func unavailableCode(code string) bool {
	switch {
	case len(code) == 5 && code[:2] == "08": // connection_exception and its subclasses
		return true
	case code == "57P01", code == "57P02", code == "57P03": // admin_shutdown, crash_shutdown, cannot_connect_now
		return true
	}
	return false
}
