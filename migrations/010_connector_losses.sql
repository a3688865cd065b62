-- The records a connector found lost for good (a deleted source topic's partitions that were not replicated):
-- its lasting notices, kept here so that they outlive the run that found them (a worker restart, a move to
-- another worker, a pause or a stop). An explicit restart of the connector (POST .../restart) clears them.
CREATE TABLE connector_losses (
    connector_name text        NOT NULL REFERENCES connectors(name) ON DELETE CASCADE,
    key            text        NOT NULL, -- the notice's identity: a partition and the offset its loss starts at
    notice         jsonb       NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (connector_name, key)
);
