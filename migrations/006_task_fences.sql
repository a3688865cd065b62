-- Zombie fencing of a changed task set in Kafka (connectors/doc_transactions.go, "Fencing a task set").
--
-- When a connector's task set changes, partitions move between task ids, so the new task set must not start
-- replicating in transactions until every transactional id of the tasks that changed or went away has been
-- fenced in Kafka, as Connect's DistributedHerder fences a whole task generation. ReplaceTaskConfigs adds
-- those task ids to fence_task_ids; the run that fences them (fence_holder: its run epoch) then records
-- fenced_generation = task_generation and empties the list. While fenced_generation < task_generation, the
-- exactly-once tasks of the connector wait before they initialize transactions.
ALTER TABLE connectors ADD COLUMN fence_task_ids int[] NOT NULL DEFAULT '{}';
ALTER TABLE connectors ADD COLUMN fence_holder bigint;
ALTER TABLE connectors ADD COLUMN fenced_generation bigint NOT NULL DEFAULT 0;

-- Offset changes (PATCH/DELETE /connectors/{c}/offsets) that must reach Kafka as well as PostgreSQL: those of
-- an exactly-once source connector, whose truth is the offsets topic on the target. The REST API files the
-- request and waits for its outcome; the run holding the STOPPED connector's unit applies it (fence, write
-- the offsets topic in a transaction, then PostgreSQL's copy) and records done or the error.
CREATE TABLE offset_requests (
    id             bigserial PRIMARY KEY,
    connector_name text    NOT NULL REFERENCES connectors(name) ON DELETE CASCADE,
    offsets        jsonb   NOT NULL, -- [{"partition": {...}, "offset": {...} | null}]
    reset          boolean NOT NULL,
    state          text    NOT NULL DEFAULT 'pending', -- pending, applying, done, failed, expired
    error          text    NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX offset_requests_pending ON offset_requests (connector_name, id) WHERE state = 'pending';
