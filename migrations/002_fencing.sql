-- Fencing by run, not only by assignment (tasks/doc.go "Ownership and fencing").
--
-- A worker registers a new session every time it joins; its heartbeat renews only that session, so a worker
-- that was declared dead (its row deleted) and comes back cannot renew the leases of the runs it had.
CREATE SEQUENCE worker_session;
ALTER TABLE workers ADD COLUMN session bigint NOT NULL DEFAULT nextval('worker_session');

-- The run that holds a unit. A run claims the unit before it starts (run_epoch from assignment_epoch, the
-- claiming worker's session) and releases it after its final commit. Only the holder may write the unit's
-- offsets, statuses and task configs. The next owner can claim only a released unit, or one whose holder's
-- session is gone (the leader deleted the worker after its TTL), so two runs of a unit never overlap.
-- run_generation is the task generation the run was started with (see connectors.task_generation).
ALTER TABLE assignments DROP COLUMN active_epoch;
ALTER TABLE assignments ADD COLUMN run_epoch bigint;
ALTER TABLE assignments ADD COLUMN run_session bigint;
ALTER TABLE assignments ADD COLUMN run_generation bigint;
-- An assignment whose unit is gone (task removed from the task set) but whose run has not released yet keeps
-- its row with worker_id '' until the release, so that the draining run can still commit.

-- The task set's generation, bumped whenever the task set changes. Runs of a new generation start only when
-- no run of an older generation still holds a unit of the connector, because a partition that moves from one
-- task to another must be released by the old task before the new one reads its offset.
ALTER TABLE connectors ADD COLUMN task_generation bigint NOT NULL DEFAULT 0;
ALTER TABLE task_configs ADD COLUMN generation bigint NOT NULL DEFAULT 0;

-- Typed notices beside a status's trace: what a running unit wants an operator to know (data not replicated,
-- with the offsets; a cluster unreachable; a remote topic gone), as JSON objects with a "kind".
ALTER TABLE statuses ADD COLUMN notices jsonb NOT NULL DEFAULT '[]';

-- The identity of the source a stored offset belongs to (for MirrorSourceConnector: the source topic's id,
-- KIP-516). A re-created topic has a new id, so an offset of the old topic is never applied to the new one.
-- NULL when unknown (offsets written through the offsets API): the task then takes the current topic's.
ALTER TABLE source_offsets ADD COLUMN source_id text;
