package kafkatest

import ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

// FencedError is the error a transactional producer reports once a newer producer with its transactional.id
// fenced it, for tests of code outside the Kafka wrappers that must react to one.
func FencedError() error {
	return ckafka.NewError(ckafka.ErrFenced, "Producer fenced by newer instance: There is a newer producer with the same transactionalId which fences the current one", true)
}

// FatalProduceError is what a produce call answers on a producer in a fatal state (the code without the flag).
func FatalProduceError() error {
	return ckafka.NewError(ckafka.ErrFatal, "Local: Fatal error", false)
}
