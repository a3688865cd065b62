package kafka

import (
	"context"
	"fmt"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmirror/kmirror/kmtype"
)

// TopicIDs returns the topic id (KIP-516) of each of topics that exists; missing topics are left out. A
// deleted and re-created topic has a new id, which is how a task tells it from the topic it replicated.
func (a *Admin) TopicIDs(ctx context.Context, topics []string) (map[string]string, error) {
	shapes, err := a.TopicShapes(ctx, topics)
	if err != nil {
		return nil, err
	}
	return kmtype.TopicIDs(shapes), nil
}

// TopicShape is a topic's id and partition count.
type TopicShape = kmtype.TopicShape

// TopicShapes is TopicIDs with each topic's partition count: a topic re-created with fewer partitions no longer
// has the old topic's last ones.
func (a *Admin) TopicShapes(ctx context.Context, topics []string) (map[string]TopicShape, error) {
	ctx, cancel := a.ctx(ctx)
	defer cancel()
	res, err := a.a.DescribeTopics(ctx, ckafka.NewTopicCollectionOfTopicNames(topics))
	if err != nil {
		return nil, fmt.Errorf("describe topics: %w", a.cause(ctx, err))
	}
	out := make(map[string]TopicShape, len(topics))
	for _, d := range res.TopicDescriptions {
		switch d.Error.Code() {
		case ckafka.ErrNoError:
			out[d.Name] = TopicShape{ID: d.TopicID.String(), Partitions: len(d.Partitions)}
		case ckafka.ErrUnknownTopicOrPart, ckafka.ErrUnknownTopicID:
		default:
			return nil, fmt.Errorf("describe topic %s: %w", d.Name, d.Error)
		}
	}
	return out, nil
}

// Admin returns an admin client that shares the consumer's connections; Close it before the consumer.
func (c *Consumer) Admin() (*Admin, error) {
	a, err := ckafka.NewAdminClientFromConsumer(c.c)
	if err != nil {
		return nil, fmt.Errorf("create admin client from consumer: %w", err)
	}
	return &Admin{a: a, Timeout: defaultAdminTimeout}, nil
}

// Admin returns an admin client that shares the producer's connections; Close it before the producer.
func (p *Producer) Admin() (*Admin, error) {
	a, err := ckafka.NewAdminClientFromProducer(p.p)
	if err != nil {
		return nil, fmt.Errorf("create admin client from producer: %w", err)
	}
	return &Admin{a: a, Timeout: defaultAdminTimeout}, nil
}
