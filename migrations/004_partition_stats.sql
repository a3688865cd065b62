-- What each source task last reported of its partitions (GET /connectors/{c}/partitions): where replication
-- stands against the source's end, and recent throughput. Written every few seconds by the run holding the
-- task, so any worker can answer for partitions replicated elsewhere; a partition that moved to another task is
-- overwritten by its new owner.
CREATE TABLE partition_stats (
    connector_name     text   NOT NULL REFERENCES connectors(name) ON DELETE CASCADE,
    topic              text   NOT NULL,
    partition          int    NOT NULL,
    remote_topic       text   NOT NULL,
    task_id            int    NOT NULL,
    worker_id          text   NOT NULL,
    replicated_offset  bigint NOT NULL,  -- the next source offset to replicate
    end_offset         bigint,           -- the source's end offset as last seen (NULL: unknown yet)
    lag_records        bigint,
    lag_seconds        double precision, -- NULL when unknown (nothing fetched yet)
    records_per_second double precision NOT NULL DEFAULT 0,
    bytes_per_second   double precision NOT NULL DEFAULT 0,
    last_replicated_at timestamptz,      -- source timestamp of the last replicated record
    status             text   NOT NULL DEFAULT 'ok',
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connector_name, topic, partition)
);
