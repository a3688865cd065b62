// Package offsetmap keeps the exact correspondence between the offsets of a source partition and the offsets
// its records were written at in the remote partition, and translates a consumer group's position with it.
//
// # The map
//
// A source task learns, for every record the target acknowledges, the pair (source offset U, target offset D),
// in source order. Consecutive pairs that both advance by one extend the current [Range]; any other step starts
// a new one:
//
//   - U jumps forward: the source has no record in between (compaction, transaction markers, aborted records,
//     a retention gap, records skipped by an offset reset);
//   - D jumps forward: the target holds other records in between (copies re-sent after a crash, another
//     producer);
//   - U or D moves backwards: an offset rewind through the offsets API, or a re-created remote topic. The new
//     range then supersedes every stored range it overlaps or that lies after it ([Range.Rewind]).
//
// A range also carries SourceNext: the source position the task had read through when the range last grew, so
// that a group committed past a trailing transaction marker still translates exactly; and GapBefore: how many
// source offsets before its first record the task had read from (the pipeline's start position, confirmed by
// the source task's first-record check), so that a group positioned before the partition's first replicated
// record (an aborted transaction and its marker at the start of the log) translates exactly too. A range marked
// UnmappedBefore follows records the map does not know the target offsets of (acknowledged without an offset,
// or, in exactly-once mode, committed in transactions whose ranges PostgreSQL had not stored before a crash):
// the gap before it is not a source gap. A range marked Uncommitted was replicated by a consumer reading
// uncommitted records from a partition that skips offsets (it holds transactions): it may hold copies of
// aborted records, which a group never saw on the source, so no translation that rests on it is exact.
//
// Ranges are persisted with the task's offset commits, in one transaction, so a persisted range never covers a
// record whose offset is not committed; a restarted task continues its last range when the first record it
// writes is contiguous with it. Without gaps a partition needs one range for its whole life; each gap costs
// one. The store bounds the history: ranges below the source's log start offset are pruned (no group can be
// positioned there), and at most [MaxRangesPerPartition] are kept (the oldest go; positions before the oldest
// kept range fall back to offset syncs, approximately).
//
// # Translation
//
// A group committed at source offset c (the next record it will read) must resume on the target at the offset
// of the first replicated record whose source offset is ≥ c: from there it reads every later record once.
// [Translate] answers from the range at or before c and the first range after it; it is exact whenever c lies
// inside a range, in a gap between two ranges (unless records there are unmapped: then the answer is the offset
// after the range before, approximate and never ahead), at the end of the last range, or within its SourceNext. Past
// that, records the group has read may not be replicated yet: the answer is the end of what was replicated
// (never ahead of the true position, so the group re-reads rather than skips) and marked approximate. Before
// the first range it is exact within the range's GapBefore (the answer is its first target offset); before
// that there is no answer here, and the caller falls back to MM2's offset syncs (§6.2 of the MM2 reference),
// which are never ahead either (and give no answer at all for a group before the first sync).
//
// With exactly-once replication (read_committed on the source, transactions on the target) both sides have
// gaps: aborted records and markers on the source are source gaps like any other, and every target
// transaction's commit marker takes a target offset, so each transaction starts a new range. A group at the
// source's log end translates to the offset after the last replicated record, which is then the target's
// trailing commit marker: a consumer resuming there reads nothing twice, as with Java MM2's "+1" rule.
package offsetmap
