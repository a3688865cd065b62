-- A consumer group's commit metadata is whatever string its client committed, and Kafka keeps its bytes as
-- they came: a NUL (confluent-kafka-python terminates "abc" as "abc\0"), bytes that are not UTF-8, kilobytes
-- of it. text refuses the first two, so the column holds the bytes, which go back to Kafka unchanged.
ALTER TABLE group_offsets
    ALTER COLUMN metadata DROP DEFAULT,
    ALTER COLUMN metadata TYPE bytea USING convert_to(metadata, 'UTF8'),
    ALTER COLUMN metadata SET DEFAULT '\x'::bytea;

-- uncommitted: the range was replicated by a consumer reading uncommitted records (isolation.level
-- read_uncommitted) from a partition that holds transactions, so it may hold copies of records of aborted
-- transactions, which a read_committed consumer of the source never saw: no translation into it is exact.
ALTER TABLE offset_ranges ADD COLUMN uncommitted boolean NOT NULL DEFAULT false;
