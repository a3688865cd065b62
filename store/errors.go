package store

import "errors"

var (
	// ErrNotFound is returned when the named row does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists is returned when creating a row whose key is taken.
	ErrAlreadyExists = errors.New("already exists")
	// ErrUnitBusy is returned when a unit cannot be claimed yet: its previous run (or a run of an older task
	// generation of its connector) still holds it. The claimer tries again after the release.
	ErrUnitBusy = errors.New("unit is still held by its previous run")
	// ErrFencePending is returned while a connector's changed task set is not fenced in Kafka yet and the
	// caller cannot fence it now (ClaimTaskFence).
	ErrFencePending = errors.New("the previous task set is not fenced yet")
	// ErrNotStopped is returned when offsets are changed while the connector is not STOPPED.
	ErrNotStopped = errors.New("connector is not stopped")
	// ErrUnstorableText is returned when a name that comes from Kafka cannot be stored as PostgreSQL text
	// (see TextStorable).
	ErrUnstorableText = errors.New("not storable as text: invalid UTF-8 or NUL")
	// ErrDeclared is returned when a config write or delete meets a connector declared from a file: only the
	// file changes it (DeclaredError names the file).
	ErrDeclared = errors.New("connector is declared by a file")
	// ErrSchemaTooNew is returned when the database was migrated by a newer kmirror than this binary.
	ErrSchemaTooNew = errors.New("database schema is newer than this kmirror")
)

// DeclaredError is ErrDeclared for one connector and the file that declares it.
type DeclaredError struct {
	Name, By string
}

func (e *DeclaredError) Error() string { return "connector " + e.Name + " is declared by " + e.By }

// Unwrap makes errors.Is(err, ErrDeclared) hold.
func (e *DeclaredError) Unwrap() error { return ErrDeclared }
