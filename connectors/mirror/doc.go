// Package mirror holds MirrorMaker 2's semantics as pure functions and small state machines: no Kafka
// client, no I/O, no clock. Everything here must agree byte for byte and decision for decision with
// Apache Kafka 4.1's MM2 (connect/mirror and connect/mirror-client), because kmirror shares topics,
// records and configs with Java MM2 and with tools such as RemoteClusterUtils.
//
// # Naming
//
// A [ReplicationPolicy] maps topic names between clusters. DefaultReplicationPolicy prefixes remote
// topics with the source alias ("A.orders"), which lets it recover the source of a topic and detect
// cycles ([IsCycle]); IdentityReplicationPolicy keeps names unchanged except for heartbeats, so it
// cannot detect cycles. The internal topic names (heartbeats, checkpoints, offset syncs) also come from
// the policy.
//
// # Selection
//
// [TopicFilter], [GroupFilter] and [ConfigPropertyFilter] apply MM2's list-of-regex configs. The
// regexes are Java regexes; they are translated to RE2 where Java and RE2 mean the same thing and
// rejected with a [PatternError] where they do not, rather than silently matching something else.
// [TopicSelector] combines the topic filter with MM2's fixed rules: internal topics are never
// replicated, cycles are never replicated, heartbeats always are.
//
// # Records
//
// [Heartbeat], [Checkpoint] and [OffsetSync] encode and decode the three internal record types in
// Kafka's protocol Schema encoding, exactly as MM2 writes them.
//
// # Task planning
//
// Source partitions are dealt round-robin to tasks ([AssignRoundRobin]); consumer groups are cut into
// contiguous chunks ([GroupContiguous]), as Connect's ConnectorUtils.groupPartitions does.
//
// # Why offset syncs are emitted when they are
//
// An offset sync says "upstream offset U of this source partition was written at downstream offset D".
// The checkpoint side translates a consumer group's upstream position G using the newest sync with
// U <= G: exactly D when G == U, otherwise D+1, the first downstream position that cannot skip a record
// the group has not consumed yet. Translation therefore lags by however many records were replicated
// since the sync, and [OffsetSyncWriter] emits a sync only when that lag, or its correctness, is at
// stake:
//
//   - on the first record of a partition in this writer's lifetime, so translation can start;
//   - when the downstream offset has moved offset.lag.max or more past the last sync's D+1, bounding
//     how stale a translated position can be;
//   - when upstream offsets are not contiguous (compaction, transaction markers, aborted records, a
//     seek or rewind), because D+1 would otherwise point into the wrong place;
//   - when the downstream offset went backwards (the remote topic was truncated or recreated).
//
// Every other sync is held back as "delayed", newest per partition, and promoted to pending on each
// offset commit, so a quiet partition still gets an exact sync for its last record one commit interval
// later. Writing a sync per record would flood the compacted, single-partition offset-syncs topic.
package mirror
