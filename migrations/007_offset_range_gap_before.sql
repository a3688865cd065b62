-- The gap before an offset-map range (connectors/offsetmap, Range.GapBefore): how many source offsets right
-- before source_start are known to hold no record, because the task read the partition from
-- source_start - gap_before and the first record it got was at source_start (a partition that starts with an
-- aborted transaction, or with compacted records). A group positioned in that gap translates exactly to the
-- range's first target offset even when no range precedes it. 0 (every range stored before) claims nothing.
ALTER TABLE offset_ranges ADD COLUMN gap_before bigint NOT NULL DEFAULT 0
    CHECK (gap_before >= 0 AND gap_before <= source_start);
