package store

import "errors"

var (
	// ErrNotFound is returned when the named row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists is returned when creating a row whose key is taken.
	ErrAlreadyExists = errors.New("already exists")
	// ErrFenced is returned when a write carries an assignment epoch that is no longer current: the unit of work
	// has been reassigned or restarted and the writer must stop.
	ErrFenced = errors.New("fenced: assignment epoch is no longer current")
	// ErrNotStopped is returned when offsets are changed while the connector is not STOPPED.
	ErrNotStopped = errors.New("connector is not stopped")
	// ErrSchemaTooNew is returned when the database was migrated by a newer kmirror than this binary.
	ErrSchemaTooNew = errors.New("database schema is newer than this kmirror")
)
