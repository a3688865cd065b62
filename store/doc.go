// Package store is kmirror's only door to PostgreSQL: desired state written by the REST API, runtime state
// written by the task runtime, and source offsets written by running tasks.
//
// Every write that the REST API makes is one transaction that also sends a NOTIFY on [Channel], so any kmirror
// process sharing the database wakes up and reconciles. Writes made on behalf of a running unit of work carry the
// unit's assignment epoch; a write with a stale epoch changes nothing and returns [ErrFenced].
package store
