package source

import "github.com/kmirror/kmirror/kmtype"

// The kinds of notice a source task or connector shows in its status (kmtype.Notice.Kind). Dashboards and
// metrics key on them; the message says the same for people.
const (
	NoticeDataNotReplicated    = "data_not_replicated"    // records gone from the source before they were replicated (offsets given)
	NoticeSourceTruncated      = "source_truncated"       // the source log now ends before the next offset to replicate
	NoticeSourceUnreachable    = "source_unreachable"     // the source cluster does not answer (retrying)
	NoticeSourceTopicMissing   = "source_topic_missing"   // a replicated source topic no longer exists
	NoticeSourceTopicDeleted   = "source_topic_deleted"   // a deleted source topic's partition left the plan with no end offset ever seen: what it held is unknown
	NoticeSourceTopicRecreated = "source_topic_recreated" // a source topic was re-created while no pipeline read it: what it held past the committed offset is unknown
	NoticeTargetUnreachable    = "target_unreachable"     // the target acknowledges nothing (retrying)
	NoticeRemoteTopicMissing   = "remote_topic_missing"   // a remote topic was deleted on the target
	NoticeRemoteTopicRecreated = "remote_topic_recreated" // a remote topic was deleted and re-created on the target
	NoticeRemoteTopicProblem   = "remote_topic_problem"   // the target refused to create or grow a remote topic
	NoticeWritesPaused         = "writes_paused"          // the worker's lease lapsed: no writes until its heartbeats are confirmed
	NoticePipelineRestarted    = "pipeline_restarted"     // the consumer and producer were restarted after an error
)

// partitionNotice is a notice about one partition, with the offsets it concerns (first > last: none).
func partitionNotice(kind, msg, topic string, partition int32, first, last int64) kmtype.Notice {
	n := kmtype.Notice{Kind: kind, Message: msg, Topic: topic, Partition: &partition}
	if first <= last {
		n.FirstOffset, n.LastOffset = &first, &last
	}
	return n
}

// Notices of what kmirror copies or keeps differently from what a client of the source saw.
const (
	NoticeAbortedRecordsReplicated = "aborted_records_replicated" // read_uncommitted: records of aborted source transactions were copied as ordinary records
)
