-- The mm2.properties a connector was declared from (kmirror serve --mm2-properties), NULL for a connector
-- created through the REST API. A declared connector is changed by its file only: REST writes to its config
-- are refused, and the file's next declaration converges it.
ALTER TABLE connectors ADD COLUMN declared_by text;

-- What a declared connector took over from the Java MirrorMaker 2 it replaces, set in the transaction that
-- creates it (its created_at is when); NULL for every other connector. A source connector: {"topic": the
-- mm2-offsets topic its source offsets were read from, "partitions": how many}; a checkpoint connector:
-- {"topic": its checkpoints topic, "partitions": group partitions checkpointed there, "groups": how many groups}.
ALTER TABLE connectors ADD COLUMN taken_over jsonb;
