-- kmirror's initial schema: desired state (connectors, task configs), runtime state (workers, leader lease,
-- assignments, statuses) and progress (source offsets). Forward-only.

-- One row: the identity of this kmirror cluster, reported as kafka_cluster_id by GET /.
CREATE TABLE kmirror_cluster (
    id          int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    cluster_id  text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now()
);
-- A Kafka-style Uuid string: 22 characters of URL-safe base64.
INSERT INTO kmirror_cluster (cluster_id)
VALUES (translate(rtrim(encode(uuid_send(gen_random_uuid()), 'base64'), '='), '+/', '-_'));

-- Desired state of each connector. config is exactly what the user submitted (string values), plus name.
CREATE TABLE connectors (
    name            text PRIMARY KEY,
    config          jsonb NOT NULL,
    target_state    text NOT NULL CHECK (target_state IN ('STARTED', 'PAUSED', 'STOPPED')),
    -- Bumped by every config or target-state change, so the runtime can tell what it has applied.
    version         bigint NOT NULL DEFAULT 1,
    -- Bumped by each restart request for the connector instance.
    restart_seq     bigint NOT NULL DEFAULT 0,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Every change of a connector's config or target state, kept after the connector is deleted.
CREATE TABLE connector_history (
    id              bigserial PRIMARY KEY,
    connector_name  text NOT NULL,
    event           text NOT NULL CHECK (event IN ('created', 'config', 'target_state', 'deleted')),
    config          jsonb,
    target_state    text,
    at              timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX connector_history_name ON connector_history (connector_name, id);

-- The current task set of each connector, written by the leader from the connector's task configs.
CREATE TABLE task_configs (
    connector_name  text NOT NULL REFERENCES connectors (name) ON DELETE CASCADE,
    task_id         int NOT NULL CHECK (task_id >= 0),
    config          jsonb NOT NULL,
    PRIMARY KEY (connector_name, task_id)
);

-- Live kmirror processes.
CREATE TABLE workers (
    id              text PRIMARY KEY,
    url             text NOT NULL,
    started_at      timestamptz NOT NULL DEFAULT now(),
    heartbeat_at    timestamptz NOT NULL DEFAULT now()
);

-- The leader lease: one row, held by one worker until expires_at. epoch grows with every new holder.
CREATE TABLE leader_lease (
    id              int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
    worker_id       text,
    epoch           bigint NOT NULL DEFAULT 0,
    expires_at      timestamptz NOT NULL DEFAULT '-infinity'
);
INSERT INTO leader_lease DEFAULT VALUES;

-- Which worker runs which unit of work. task_id -1 is the connector instance itself. epoch grows with every
-- (re)assignment and restart. active_epoch is the epoch of the run the owner has actually started: offset
-- commits carry their run's epoch and are refused once a newer run is active, so a run that was replaced
-- cannot commit, while a run that is merely being stopped can still commit what the target acknowledged.
CREATE TABLE assignments (
    connector_name  text NOT NULL REFERENCES connectors (name) ON DELETE CASCADE,
    task_id         int NOT NULL CHECK (task_id >= -1),
    worker_id       text NOT NULL,
    epoch           bigint NOT NULL,
    active_epoch    bigint,
    PRIMARY KEY (connector_name, task_id)
);
CREATE SEQUENCE assignment_epoch;

-- Reported state of connectors (task_id -1) and tasks, written by whoever runs them.
CREATE TABLE statuses (
    connector_name  text NOT NULL REFERENCES connectors (name) ON DELETE CASCADE,
    task_id         int NOT NULL CHECK (task_id >= -1),
    state           text NOT NULL CHECK (state IN ('UNASSIGNED', 'RUNNING', 'PAUSED', 'FAILED', 'RESTARTING', 'STOPPED')),
    worker_id       text NOT NULL DEFAULT '',
    trace           text NOT NULL DEFAULT '',
    -- The assignment epoch the report belongs to; a report from an older epoch never overwrites a newer one.
    epoch           bigint NOT NULL DEFAULT 0,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connector_name, task_id)
);

-- Source offsets in Connect's KIP-875 shape: partition map -> offset map. partition_key is the canonical JSON of
-- partition (sorted keys). Like Connect's offsets topic, offsets outlive the connector: re-creating a connector
-- with the same name resumes where it stopped (DELETE /connectors/{c}/offsets resets them).
CREATE TABLE source_offsets (
    connector_name  text NOT NULL,
    partition_key   text NOT NULL,
    partition       jsonb NOT NULL,
    "offset"        jsonb NOT NULL,
    updated_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connector_name, partition_key)
);

-- Restart requests (POST .../restart and .../tasks/{t}/restart), consumed by the leader.
CREATE TABLE restart_requests (
    id              bigserial PRIMARY KEY,
    connector_name  text NOT NULL REFERENCES connectors (name) ON DELETE CASCADE,
    task_id         int,
    include_tasks   boolean NOT NULL DEFAULT false,
    only_failed     boolean NOT NULL DEFAULT false,
    requested_at    timestamptz NOT NULL DEFAULT now()
);

-- Topics each connector has produced to (KIP-558 topic tracking).
CREATE TABLE connector_topics (
    connector_name  text NOT NULL REFERENCES connectors (name) ON DELETE CASCADE,
    topic           text NOT NULL,
    PRIMARY KEY (connector_name, topic)
);

-- Logger levels set with scope=cluster (KIP-976), applied by every worker.
CREATE TABLE logger_levels (
    logger          text PRIMARY KEY,
    level           text NOT NULL,
    last_modified   bigint NOT NULL
);
