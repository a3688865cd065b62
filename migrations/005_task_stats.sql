-- What each source task last measured of its pipeline (GET /connectors/{c}/partitions, capacity advice): where
-- its poll loop spends its time, how full its producer's batches are, how the brokers answer, and how busy its
-- worker's CPUs are. Written with the partition stats by the run holding the task; one row per task.
CREATE TABLE task_stats (
    connector_name text  NOT NULL REFERENCES connectors(name) ON DELETE CASCADE,
    task_id        int   NOT NULL,
    worker_id      text  NOT NULL,
    pipeline       jsonb NOT NULL, -- store.PipelineStat
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connector_name, task_id)
);
