// Package chaos is kmirror's fault suite. Its tests start a private harness (their own PostgreSQL and Kafka
// clusters A and B, so that killing a broker or the database never disturbs the other test packages), run
// three kmirror worker processes against one database, inject real faults (kill -9, SIGSTOP, SIGTERM, broker
// and PostgreSQL crashes, topic re-creation, records deleted before they were read) while sequenced records
// flow, and audit every record that arrived on the target: missing, duplicated, reordered, written by a
// producer that had already been superseded, and (for a source topic written in transactions) copied from an
// aborted source transaction.
//
// The package holds only tests. By default (go test ./...) each case runs once with small volumes; the flag
// -chaos.long (make chaos) grows the volumes and repeats the kill cases.
package chaos
