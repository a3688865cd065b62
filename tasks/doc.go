// Package tasks is kmirror's runtime: it turns the desired state in PostgreSQL into running connector
// instances and tasks, spread over the kmirror processes that share the database, and reports their statuses.
// It knows no Kafka: the server hands it a Registry that creates connectors and tasks.
//
// # Units of work
//
// Every connector is one unit (its connector instance, task id -1) plus one unit per task of its current task
// set. A connector instance plans: it publishes its task set (SetTaskConfigs), which the store keeps as the
// connector's task_configs. Tasks do the replication.
//
// # Leader election
//
// One process at a time holds the leader lease (a single row with an expiry). Every process campaigns on each
// heartbeat tick: the holder renews, anyone takes an expired or released lease, and the lease epoch grows each
// time it changes hands. The leader's writes are fenced by that epoch, so a leader that stalled past its lease
// changes nothing. A clean shutdown releases the lease at once.
//
// # Assignment
//
// In each round the leader drops dead workers (no heartbeat within WorkerTTL), places every unit without a live
// owner on the least loaded worker, evens the load to within one unit, and turns restart requests into in-place
// reassignments. Every (re)assignment takes a new epoch from a sequence.
//
// # Unit lifecycle
//
// Each worker runs exactly the units assigned to it. A run is bound to one version of its work (epoch, target
// state, configs); when any of them changes the run is stopped softly (its context is cancelled; it drains,
// flushes and commits) and a new run starts:
//
//	                assigned (epoch e)
//	                       │
//	   ┌──── target STOPPED ┼ target PAUSED ─────┐
//	   ▼                    ▼                     ▼
//	STOPPED            RUNNING ──error──▶ FAILED   PAUSED
//	(task set          (Run)              (stays failed across pause/resume
//	 emptied)                              until a restart gives a new epoch)
//
// Before a task's first run its status is UNASSIGNED (written with the task set). On a clean shutdown every
// unit is reported UNASSIGNED and the worker leaves the cluster. Statuses, task configs and offset commits are
// written under the unit's epoch: a unit that lost its assignment is fenced (ErrFenced) and stops without a
// FAILED status, so a status never shows a state that the runtime did not reach.
package tasks
