-- What an offset-map range (connectors/offsetmap, Range) knows about the source offsets right before it.
--
-- gap_before: how many source offsets right before source_start are known to hold no record, because the task
-- read the partition from source_start - gap_before and the first record it got was at source_start (a
-- partition that starts with an aborted transaction, or with compacted records). A group positioned in that
-- gap translates exactly to the range's first target offset even when no range precedes it. 0 claims nothing.
--
-- unmapped_before: source records between the previous range and this one's gap were replicated at target
-- offsets the map does not know (acknowledged without an offset, or committed in exactly-once transactions
-- whose ranges were not persisted before a crash). A group positioned there translates from the previous
-- range, approximately and never ahead, instead of from this one, which would skip them.
ALTER TABLE offset_ranges
    ADD COLUMN gap_before bigint NOT NULL DEFAULT 0 CHECK (gap_before >= 0 AND gap_before <= source_start),
    ADD COLUMN unmapped_before boolean NOT NULL DEFAULT false;
