-- Failover and failback operations (POST /connectors/{c}/failover, /failback): filed by the REST API in one
-- transaction, run by
-- whichever worker takes them, and kept with their report afterwards. worker_id and heartbeat_at say who runs
-- one: a running operation whose heartbeat is older than the runner's stale window is taken over by another
-- worker (its worker died). report is the operation's JSON report, kept as the failover package wrote it (json, not jsonb:
-- its members keep their order).
CREATE TABLE failovers (
    id                   bigserial PRIMARY KEY,
    connector_name       text NOT NULL REFERENCES connectors (name) ON DELETE CASCADE,
    -- failback: connector_name is the B->A source connector, failover_of the A->B one whose failover it undoes.
    kind                 text NOT NULL DEFAULT 'failover' CHECK (kind IN ('failover', 'failback')),
    failover_of          text,
    checkpoint_connector text,
    drain_timeout_ms     bigint NOT NULL CHECK (drain_timeout_ms >= 0),
    state                text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'running', 'succeeded', 'failed')),
    phase                text NOT NULL DEFAULT '',
    error                text NOT NULL DEFAULT '',
    report               json,
    worker_id            text NOT NULL DEFAULT '',
    heartbeat_at         timestamptz,
    requested_at         timestamptz NOT NULL DEFAULT now(),
    finished_at          timestamptz
);
CREATE INDEX failovers_connector ON failovers (connector_name, id);
-- At most one unfinished operation per connector.
CREATE UNIQUE INDEX failovers_one_open ON failovers (connector_name) WHERE state IN ('pending', 'running');
