// Package tasks is kmirror's runtime: it turns the desired state in PostgreSQL into running connector
// instances and tasks, spread over the kmirror processes that share the database, and reports their statuses.
// It knows no Kafka: the server hands it a Registry that creates connectors and tasks.
//
// # Units of work
//
// Every connector is one unit (its connector instance, task id -1) plus one unit per task of its current task
// set. A connector instance plans: it publishes its task set (SetTaskConfigs), which the store keeps as the
// connector's task_configs with a generation that grows with every change. Tasks do the replication.
//
// # Membership and leases
//
// A worker joins with a new session (RegisterWorker) and heartbeats every HeartbeatInterval; a heartbeat
// renews only that session. Each heartbeat the database confirms extends the session's lease to
//
//	sent + WorkerTTL - Settle        (Settle = WorkerTTL / 2)
//
// where sent is this worker's monotonic time when it sent the heartbeat. The leader declares a worker dead
// only when its last heartbeat is older than WorkerTTL by the database's clock, which stamped it later than
// sent, so a worker's lease ends at least Settle before anybody may take its units. When a heartbeat finds the
// session gone (the worker stalled past its TTL and was declared dead), the worker revokes the session's lease
// at once, stops every run of it, and joins again with a new session.
//
// # Leader election and assignment
//
// One process at a time holds the leader lease (a single row with an expiry); the lease epoch grows each time
// it changes hands and fences the leader's writes. In each round the leader places every unit without a live
// owner, spreads each connector's units evenly over the workers and then the total load, and turns restart
// requests into in-place reassignments. A round with nothing else to change weighs the tasks by the byte rates
// they report (load.go): a worker above 1.5x the mean for a sustained minute exchanges hot tasks for cold tasks
// of the same connectors with the coolest worker, which keeps every count even. Every (re)assignment takes a
// new epoch. It declares workers dead (and
// so frees their units) only once its own link to the database has worked for one WorkerTTL without a break
// (no failed heartbeat or round): after a database outage, or a stall of its own, every heartbeat may look
// old while the workers are alive. A worker that takes over from a dead leader with a healthy link acts at once.
//
// # Ownership and fencing: the one rule
//
// A unit runs on one worker at a time, as one run at a time. Before a run starts it claims the unit
// (ClaimUnit): the claim succeeds only if the unit is assigned to this worker under the run's assignment epoch
// and no run of a live session holds it, and it gives the run a run epoch from the same sequence. Every write
// of the run carries that run epoch and is refused (ErrFenced) once the run no longer holds the unit:
//
//	write                         allowed while                              refused when
//	offsets (CommitOffsets)       the run holds the unit                     released, abandoned, session dead
//	status (PutStatus)            the run holds the unit and it still        as above; a removed task has no
//	                              belongs to the task set                    status (ErrNotFound)
//	task set (ReplaceTaskConfigs) the connector run holds the connector unit as above
//	records to Kafka              Lease().Valid()                            lease expired or revoked
//
// Offsets never move backwards through CommitOffsets: a commit below the stored offset of the same source
// incarnation (SourceID) is ignored; only the offsets API (the connector STOPPED) or a new incarnation moves
// one back.
//
// The run releases the unit after its final commit (ReleaseUnit, with its last status). So a move between
// live workers is a hand-over: the leader points the assignment at the new worker; the old worker sees the
// unit leave, stops the run (drain, flush, commit, UNASSIGNED, release); only then can the new worker's run
// claim it and read the offsets the old one committed. A task of a new task generation also waits until no
// run of an older generation of its connector holds a unit, because partitions move between tasks when the
// task set changes; tasks whose config did not change carry on into the new generation.
//
// # Unit lifecycle on a worker
//
// Each unit has a supervisor (slot). The reconcile loop (NOTIFY, plus a slow poll) only tells supervisors
// what their unit should run; it never waits for a unit, so one slow unit cannot hold up the others.
//
//	           intent (work, session)
//	                   │
//	                   ▼
//	   ┌─────────────── claim ───────────────┐ ErrUnitBusy: wait for the release
//	   │ target STOPPED    │ target PAUSED   │ ErrFenced: the assignment moved on; idle until the next intent
//	   ▼                   ▼                 ▼
//	STOPPED             PAUSED            RUNNING ──error──▶ FAILED (stays failed across pause/resume until a
//	   │                   │ RunPaused:      │                 │     restart gives a new epoch)
//	   │                   │ reads only      │                 │
//	   └───────────────────┴─────────────────┴─────────────────┘
//	                   │ stop: new intent, unit left, or shutdown
//	   soft stop (ctx cancelled): drain, flush, commit; return within StopTimeout
//	   hard stop (StopContext done, lease revoked): drop what is queued, commit what was acknowledged, return
//	   abandoned (still running one Settle later): its claim is released for it, which fences its writes; its
//	   lease was revoked a Settle ago, so nothing it handed to Kafka can still be written
//	                   │
//	   release (with UNASSIGNED if the unit left this worker) ──▶ the next run may claim
//
// A paused task unit still holds its claim. If its task is a PausedTask, the run calls RunPaused under the same
// claim and stop contract as Run: it may read and publish partition stats (so a paused mirror shows its backlog
// growing) but writes nothing else: its env refuses offsets, offset-map ranges, group offsets and topics, keeps
// the status PAUSED, and its Lease is never Valid, so nothing reaches Kafka. Its errors are retried, never FAILED.
//
// # Failure cases
//
//   - kill -9 of a worker: its session stops heartbeating; after WorkerTTL the leader deletes it and places its
//     units elsewhere; their claims are free because the holder session is gone. Duplicates: what the dead runs
//     had acknowledged but not committed (the commit interval) and what was in flight.
//   - SIGSTOP past the TTL, then SIGCONT: as kill -9 for the others. For the stalled worker, its lease ended
//     Settle before its units moved; tasks cap their producers' delivery timeout below Settle, so its queued
//     records expire instead of being written after the new owners started; its next heartbeat finds the
//     session gone, revokes the lease and stops the runs; their commits and statuses are fenced.
//   - PostgreSQL down: heartbeats fail, leases run out after WorkerTTL - Settle and tasks pause their writes;
//     nobody is declared dead, because the leader trusts heartbeats again only one TTL after it could work.
//   - SIGTERM: the worker gives up leadership, stops every run within StopTimeout while still heartbeating,
//     then leaves the cluster (RemoveWorker) and the leader hands its units to the others at once.
//
// In exactly-once mode (workers with --exactly-once-source-support=enabled; connectors/source/doc_transactions.go) a
// stale source run's writes become invisible instead of bounded: its records are visible only once their
// transaction commits, a commit is attempted only while the lease is valid, and the task's next run fences
// the task's transactional id in Kafka before it reads where to resume. When the task set changes, partitions
// move between task ids: before any task of the new set initializes transactions, the transactional ids of the
// former tasks whose partitions changed are fenced in Kafka, once, by the first run that finds the fence owed
// after the former set released its units (FenceTaskSet, fence.go), as Connect fences a whole task generation.
package tasks
