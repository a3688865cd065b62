package connectors

import (
	"context"
	"log/slog"
	"time"

	"github.com/kmirror/kmirror/tasks"
)

// TopicRecordInterval bounds how often a heartbeat or checkpoint task re-records the topic it writes. Connect
// records a topic a task writes at its first write after the topic was unknown, including after PUT
// .../topics/reset; these tasks re-record while they keep writing, so a reset shows their topic again within
// this interval of their next write, at the cost of one idempotent insert per task per interval.
const TopicRecordInterval = 10 * time.Second

// TopicRecorder records, as KIP-558 topic tracking does, the one topic a heartbeat or checkpoint task writes.
// It is owned by the task's loop.
type TopicRecorder struct {
	env      tasks.TaskEnv
	topic    string
	log      *slog.Logger
	recorded time.Time // when the topic was last recorded; zero until the first write
}

// NewTopicRecorder returns the recorder of topic for a task's env.
func NewTopicRecorder(env tasks.TaskEnv, topic string, log *slog.Logger) *TopicRecorder {
	return &TopicRecorder{env: env, topic: topic, log: log}
}

// Delivered is told of a write the target acknowledged. A failure to record is logged and retried at the next
// write: topic tracking is informational and must not stop heartbeats or checkpoints.
func (r *TopicRecorder) Delivered(ctx context.Context, now time.Time) {
	if !r.recorded.IsZero() && now.Sub(r.recorded) < TopicRecordInterval {
		return
	}
	if err := r.env.RecordTopics(ctx, []string{r.topic}); err != nil {
		if ctx.Err() == nil {
			r.log.WarnContext(ctx, "could not record the active topic", "topic", r.topic, "err", err)
		}
		return
	}
	r.recorded = now
}
