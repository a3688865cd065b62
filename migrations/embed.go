// Package migrations holds kmirror's forward-only PostgreSQL schema migrations, embedded into the binary.
//
// Files are named NNN_description.sql and applied in order by the store package (one transaction each).
// Never edit a migration that has been released; add a new one.
package migrations

import "embed"

// FS holds the *.sql migration files.
//
//go:embed *.sql
var FS embed.FS
