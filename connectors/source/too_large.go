package source

import (
	"fmt"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// A record too large for the target is refused in one of two places, and each has its own limit: the producer
// refuses it before sending when it exceeds the producer's own request limit (Java's max.request.size,
// librdkafka's message.max.bytes), and the target broker refuses it at delivery when it exceeds the remote
// topic's max.message.bytes (whose default is the broker's message.max.bytes). The source consumer is never the
// limit: a fetch returns at least one whole record batch whatever its size. The errors name the limit that was
// hit, with its value where kmirror knows it, so that nobody raises a setting that was not the problem.

// refusedError is the error of a record (of size value bytes; -1 unknown) the producer refused.
func (r *sourceRun) refusedError(p *sourcePartition, offset int64, size int, err error) error {
	if kafka.IsRecordTooLarge(err) {
		what := ""
		if size >= 0 {
			what = fmt.Sprintf(" (%d value bytes)", size)
		}
		limit := r.producerProps[producerRequestLimit]
		if limit == "" {
			limit = "librdkafka's default"
		} else {
			limit += " bytes"
		}
		return fmt.Errorf("replicate %s topic %s partition %d offset %d%s to %s topic %s: %w: the record exceeds the target producer's max.request.size (%s), so it was never sent; raise producer.override.max.request.size (the remote topic's max.message.bytes on %s must allow it too)",
			r.sourceAlias, p.tp.Topic, p.tp.Partition, offset, what, r.targetAlias, *p.remote, err, limit, r.targetAlias)
	}
	err = fmt.Errorf("replicate %s topic %s partition %d offset %d to %s topic %s: %w",
		r.sourceAlias, p.tp.Topic, p.tp.Partition, offset, r.targetAlias, *p.remote, err)
	if kafka.IsRetriable(err) || kafka.IsFatal(err) {
		// e.g. a remote partition the producer does not know yet (the connector adds partitions to
		// remote topics on its refresh): a later pipeline succeeds, the task must not fail for it. A
		// producer in a fatal state is replaced by the next pipeline, as the poll loop's check does.
		err = &pipelineError{err: err}
	}
	return err
}

// producerRequestLimit is the librdkafka property Java's max.request.size becomes on the replication producer.
const producerRequestLimit = "message.max.bytes"

// refusedByBrokerAdvice is what to add to a failed delivery's error when the target broker refused the record
// as too large ("" for any other failure): the producer had let it through, so the remote topic's limit is
// the one that was hit.
func (r *sourceRun) refusedByBrokerAdvice(p *sourcePartition, err error) string {
	if !kafka.IsRecordTooLarge(err) {
		return ""
	}
	return fmt.Sprintf(": cluster %s refused the record as larger than topic %s accepts; raise that topic's max.message.bytes on %s (its default is the broker's message.max.bytes; sync.topic.configs copies the source topic's value unless it is excluded)",
		r.targetAlias, *p.remote, r.targetAlias)
}
