-- The offset map: which target offsets the records of a source partition were written at, as ranges
-- (connectors/offsetmap/doc.go). A range maps source offsets source_start..source_end one to one onto target
-- offsets target_start..; a new range begins only where the source or the target offsets jump (compaction,
-- transaction markers, a retention gap, a restart that re-sent records). source_next is the source position the
-- task had read through when it last extended the range: no record of the source exists between source_end
-- and source_next. Written by the source task holding its claim, in the transaction that commits its offsets,
-- so a range never covers a record whose offset is not committed.
--
-- Keyed by the cluster pair rather than the connector: the checkpoint connector and the failover API translate
-- for a pair of clusters, whichever source connector replicated the partition. Bounded by pruning below the
-- source's log start offset and by a cap on ranges per partition (the oldest go first).
CREATE TABLE offset_ranges (
    source_alias   text   NOT NULL,
    target_alias   text   NOT NULL,
    topic          text   NOT NULL,
    partition      int    NOT NULL,
    source_start   bigint NOT NULL,
    source_end     bigint NOT NULL,
    target_start   bigint NOT NULL,
    source_next    bigint NOT NULL,
    source_id      text   NOT NULL DEFAULT '',
    connector_name text   NOT NULL,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (source_alias, target_alias, topic, partition, source_start),
    CHECK (source_end >= source_start AND source_next > source_end)
);

-- The latest translation of every consumer group a checkpoint connector follows, per source partition: what
-- GET /connectors/{c}/groups answers. downstream_offset is NULL when the group's position cannot be
-- translated (no offset map and no offset sync for the partition, or the group is before the oldest one).
CREATE TABLE group_offsets (
    connector_name    text   NOT NULL REFERENCES connectors(name) ON DELETE CASCADE,
    group_id          text   NOT NULL,
    topic             text   NOT NULL,
    partition         int    NOT NULL,
    upstream_offset   bigint NOT NULL,
    downstream_topic  text   NOT NULL,
    downstream_offset bigint,
    exact             boolean NOT NULL,
    basis             text   NOT NULL,
    metadata          text   NOT NULL DEFAULT '',
    read_at           timestamptz NOT NULL,
    replicated_at     timestamptz,
    emitted           boolean NOT NULL DEFAULT false,
    PRIMARY KEY (connector_name, group_id, topic, partition)
);
