package connectors

import (
	"context"
	"fmt"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// CreateCompactedTopic creates one of MM2's single-partition compacted topics. Like MirrorUtils it treats
// "already exists" as success.
func CreateCompactedTopic(ctx context.Context, admin *kafka.Admin, topic string, replicationFactor int) error {
	res, err := admin.CreateTopics(ctx, []kafka.NewTopic{{
		Name: topic, Partitions: 1, ReplicationFactor: replicationFactor,
		Config: map[string]string{"cleanup.policy": "compact"},
	}})
	if err != nil {
		return err
	}
	if err := res[topic]; err != nil && !kafka.IsTopicExists(err) {
		return fmt.Errorf("create topic %s: %w", topic, err)
	}
	return nil
}
