package source

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/kmtype"
)

// consumeError decides what a consumer error means: nil to go on, or the error that ends the pipeline.
func (r *sourceRun) consumeError(ctx context.Context, consumer sourceReader, err error) error {
	var pe *kafka.PartitionError
	if errors.As(err, &pe) {
		switch {
		case kafka.IsOffsetOutOfRange(pe.Err):
			return r.outOfRange(ctx, consumer, pe)
		case kafka.IsUnknownTopic(pe.Err):
			r.notice("topic:"+pe.Topic, kmtype.Notice{Kind: NoticeSourceTopicMissing, Topic: pe.Topic,
				Message: fmt.Sprintf("source topic %s no longer exists on %s; its partitions leave this task at the connector's next topic refresh", pe.Topic, r.sourceAlias)})
			return nil
		case kafka.IsAuthorization(pe.Err):
			return fmt.Errorf("read %s topic %s: %w", r.sourceAlias, pe.Topic, pe.Err)
		}
		r.limit.Log(ctx, r.log, slog.LevelWarn, "consume:"+pe.Topic, "consumer error", "topic", pe.Topic, "partition", pe.Partition, "error", pe.Err)
		return nil
	}
	if kafka.IsOffsetOutOfRange(err) {
		return r.outOfRange(ctx, consumer, nil)
	}
	if kafka.IsAuthorization(err) {
		return fmt.Errorf("read from %s: %w", r.sourceAlias, err)
	}
	if kafka.IsAuthentication(err) {
		return fmt.Errorf("authenticate to source cluster %s: %w", r.sourceAlias, err)
	}
	if kafka.IsUnknownTopic(err) {
		// A partition the consumer no longer finds, not an unreachable cluster: the identity watch names the
		// partitions whose topic is gone within sourceIdentityInterval.
		r.limit.Log(ctx, r.log, slog.LevelWarn, "source-unknown", "a source partition is unknown to the consumer (its topic deleted?)", "cluster", r.sourceAlias, "error", err)
		return nil
	}
	if kafka.IsRetriable(err) {
		r.limit.Log(ctx, r.log, slog.LevelWarn, "source", "source cluster error, retrying", "cluster", r.sourceAlias, "error", err)
		r.notice("source", kmtype.Notice{Kind: NoticeSourceUnreachable, Message: fmt.Sprintf("source cluster %s: %v (retrying)", r.sourceAlias, err)})
		return nil
	}
	r.limit.Log(ctx, r.log, slog.LevelWarn, "consume", "consumer error", "error", err)
	return nil
}

// outOfRange handles a fetch position that is no longer in the source log. librdkafka does not always say
// which partition it was (the error can arrive as a client-wide event), so every assigned partition whose
// next offset lies outside its log is handled. The records in between are lost to replication: the task says
// so in its status and the log, then continues where the consumer's auto.offset.reset says (MM2's default:
// earliest), or fails when it is none. A position out of range is also how a re-created topic shows when its
// new log is shorter than the old one: the topic id tells, and then the pipeline starts the topic over instead.
func (r *sourceRun) outOfRange(ctx context.Context, consumer sourceReader, only *kafka.PartitionError) error {
	if check, err := r.ids.checkSources(ctx, r.sourceAdmin, nil, false); err == nil && len(check.recreated) > 0 {
		r.ids.recreated.Store(&check)
		return nil
	}
	return r.skipOutOfRange(consumer, only)
}

// skipOutOfRange skips the gap of every partition (or only the one named) whose next offset lies outside its log.
func (r *sourceRun) skipOutOfRange(consumer sourceReader, only *kafka.PartitionError) error {
	for _, p := range r.parts {
		if only != nil && (p.tp.Topic != only.Topic || p.tp.Partition != only.Partition) {
			continue
		}
		want := p.next
		if want < 0 {
			acked, _ := p.progress()
			switch {
			case acked >= 0:
				want = acked + 1
			case p.startAt >= 0:
				want = p.startAt // the log start it was assigned at: retention moved past it before the first fetch
			default:
				continue // started from the log's logical beginning or end: nothing can be missing
			}
		}
		low, high, err := consumer.Watermarks(p.tp.Topic, p.tp.Partition, 10*time.Second)
		if err != nil {
			if kafka.IsUnknownTopic(err) {
				continue
			}
			return &pipelineError{err: err}
		}
		if want >= low && want <= high {
			continue
		}
		if err := r.skipGap(consumer, p, want, low, high); err != nil {
			return err
		}
	}
	return nil
}

func (r *sourceRun) skipGap(consumer sourceReader, p *sourcePartition, want, low, high int64) error {
	var what string
	kind, first, last := NoticeDataNotReplicated, want, low-1
	if want < low {
		what = fmt.Sprintf("records %d to %d of %s topic %s partition %d were deleted (retention) before they were replicated",
			want, low-1, r.sourceAlias, p.tp.Topic, p.tp.Partition)
	} else {
		kind, first, last = NoticeSourceTruncated, high, want-1
		what = fmt.Sprintf("%s topic %s partition %d now ends at offset %d, before the next offset to replicate (%d): the log was truncated (an unclean leader election?)",
			r.sourceAlias, p.tp.Topic, p.tp.Partition, high, want)
	}
	if r.resetPolicy == "error" {
		return fmt.Errorf("%s; the consumer's auto.offset.reset is none, so the task stops: move the connector's offset with PATCH /connectors/%s/offsets to continue", what, r.t.id.Connector)
	}
	next := low
	if r.resetPolicy == "latest" {
		next = high
	}
	msg := fmt.Sprintf("DATA NOT REPLICATED: %s; continuing at offset %d (auto.offset.reset=%s)", what, next, r.resetPolicy)
	r.log.Error(msg, "topic", p.tp.Topic, "partition", p.tp.Partition)
	r.notice(fmt.Sprintf("gap:%s-%d:%d", p.tp.Topic, p.tp.Partition, want), partitionNotice(kind, msg, p.tp.Topic, p.tp.Partition, first, last))
	if err := consumer.Seek(p.tp.Topic, p.tp.Partition, next); err != nil {
		return &pipelineError{err: err}
	}
	p.next = next
	return nil
}
