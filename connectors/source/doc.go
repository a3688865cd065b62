// Package source is MirrorSourceConnector and MirrorSourceTask: the connector plans partitions onto tasks
// (planner, task assignment, remote topics, ACL and config syncs); each task replicates its partitions from
// the source cluster to the target, on the C data path (records move in C, bookkeeping per batch in Go) or the
// Go one, at least once or in transactions (doc_transactions.go), and commits the offsets the target
// acknowledged to PostgreSQL through the runtime.
package source
