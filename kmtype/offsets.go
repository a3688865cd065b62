package kmtype

import "time"

// Offset is one source offset in Connect's KIP-875 shape. A nil Offset map means "no offset" (reset).
type Offset struct {
	Partition map[string]any
	Offset    map[string]any
	// SourceID identifies the incarnation of the source partition the offset belongs to (a source topic's id),
	// "" when unknown. It is kept beside the offset, not in it, so the offsets API shows Connect's shape.
	SourceID string
}

// RangeKey names a replicated partition: a source topic-partition of a cluster pair.
type RangeKey struct {
	SourceAlias, TargetAlias string
	Topic                    string
	Partition                int32
}

// OffsetRange is one range of the offset map (connectors/offsetmap): source offsets SourceStart..SourceEnd were
// written one to one at target offsets TargetStart.., and no source record lies in (SourceEnd, SourceNext).
type OffsetRange struct {
	RangeKey
	SourceID                            string // the source topic's id the offsets belong to ("" unknown)
	SourceStart, SourceEnd, TargetStart int64
	SourceNext                          int64
	// GapBefore is how many source offsets right before SourceStart are known to hold no record (0: unknown).
	GapBefore int64
	// UnmappedBefore says records before the range's gap, after the previous range, were replicated at target
	// offsets the map does not know.
	UnmappedBefore bool
	// Uncommitted says the range may hold copies of records of aborted source transactions (read uncommitted
	// from a partition that holds transactions): no translation into it is exact.
	Uncommitted bool
	// Rewind makes the range supersede every other stored range of its partition that it overlaps, that
	// follows it in the source, that ends at or after its target start, or that belongs to another source id.
	Rewind bool
	// UpdatedAt is when the range last grew (read only).
	UpdatedAt time.Time
}

// RangeQuery asks for the ranges around a source offset of a partition.
type RangeQuery struct {
	RangeKey
	Offset int64
}

// RangesAround is the answer to a RangeQuery: the last range starting at or before the offset and the first
// starting after it, each nil when there is none.
type RangesAround struct {
	Prev, Next *OffsetRange
}

// TargetRange is a run of consecutive target offsets Start..End of a partition that a source connector wrote.
type TargetRange struct {
	Topic      string
	Partition  int32
	Start, End int64
}
