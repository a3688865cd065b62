package cpath_test

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/cpath"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

// saslOnPlaintext makes a client ask a PLAINTEXT listener for a SASL handshake: the broker refuses it, and
// librdkafka reports a failed authentication (RD_KAFKA_RESP_ERR__AUTHENTICATION) and retries for ever, as it
// does for a wrong password. A real broker answers, so the error travels librdkafka's own way to the pipeline.
var saslOnPlaintext = map[string]string{
	"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN", "sasl.username": "u", "sasl.password": "not-the-password",
}

// TestProducerAuthenticationFailureReachesGo: a producer that cannot authenticate is no reason to wait for
// acknowledgements; its error event reaches Go in a Batch and AuthFailure answers with it, as package
// kafka's Producer does, so the source task fails instead of stalling.
func TestProducerAuthenticationFailureReachesGo(t *testing.T) {
	t.Parallel()
	src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
	kafkatest.CreateTopic(t, "A", src, 1, nil)
	kafkatest.Produce(t, "A", []kafkatest.Record{{Topic: src, Value: []byte("v")}})
	pl := pipeline(t, []cpath.Part{{Topic: src, Remote: dst}}, 0, saslOnPlaintext)
	if err := pl.Assign([]int64{cpath.OffsetBeginning}); err != nil {
		t.Fatal(err)
	}
	var seen []error
	deadline := time.Now().Add(60 * time.Second)
	for pl.AuthFailure() == nil {
		if time.Now().After(deadline) {
			t.Fatalf("no authentication failure reported; producer errors %v", seen)
		}
		seen = append(seen, pl.Step(10*time.Millisecond, cpath.MaxBatch).ProducerErrors...)
	}
	if err := pl.AuthFailure(); !kafka.IsAuthentication(err) {
		t.Fatalf("AuthFailure %v: not an authentication failure", err)
	}
	if !slices.ContainsFunc(seen, kafka.IsAuthentication) {
		t.Fatalf("the batches' producer errors %v do not carry the failure", seen)
	}
	if err := pl.Fatal(); err != nil {
		t.Fatalf("Fatal %v: a failed authentication is not fatal to the producer", err)
	}
}

// TestConsumerAuthenticationFailureReachesGo: the consumer's failed authentication is a client-wide consumer
// error of a Batch (Part -1), which the source task turns into a failed task.
func TestConsumerAuthenticationFailureReachesGo(t *testing.T) {
	t.Parallel()
	src := kafkatest.TopicName(t, "src")
	kafkatest.CreateTopic(t, "A", src, 1, nil)
	cons := map[string]string{
		"bootstrap.servers": kafkatest.Bootstrap(t, "A"), "group.id": "cpath-test", "enable.auto.commit": "false",
		"auto.offset.reset": "error",
	}
	for k, v := range saslOnPlaintext {
		cons[k] = v
	}
	pl, err := cpath.New(cpath.Config{Consumer: cons, Producer: map[string]string{"bootstrap.servers": kafkatest.Bootstrap(t, "B")},
		Parts: []cpath.Part{{Topic: src, Remote: src}}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pl.Close)
	if err := pl.Assign([]int64{cpath.OffsetBeginning}); err != nil {
		t.Fatal(err)
	}
	var seen []cpath.ConsumerError
	deadline := time.Now().Add(60 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatalf("no authentication failure reported; consumer errors %v", seen)
		}
		b := pl.Step(10*time.Millisecond, cpath.MaxBatch)
		seen = append(seen, b.ConsumerErrors...)
		for _, e := range b.ConsumerErrors {
			if e.Part == -1 && kafka.IsAuthentication(e.Err) {
				return
			}
		}
		if len(b.ProducerErrors) > 0 {
			t.Fatalf("producer errors %v: only the consumer authenticates", b.ProducerErrors)
		}
	}
}

// TestProducerHonoursMessageTimeout: the remote topics take the producer's message.timeout.ms, as a Go
// producer's do. It is what fences a stalled worker on the Kafka side (connectors/delivery.go caps it
// below the settle window): a record the producer could not send in time must fail, not wait for
// librdkafka's 300 s topic default — with which a worker resumed from SIGSTOP wrote records after its
// partitions' new owner. Here the producer cannot authenticate, so nothing can be sent.
func TestProducerHonoursMessageTimeout(t *testing.T) {
	t.Parallel()
	src, dst := kafkatest.TopicName(t, "src"), kafkatest.TopicName(t, "dst")
	kafkatest.CreateTopic(t, "A", src, 1, nil)
	kafkatest.Produce(t, "A", []kafkatest.Record{{Topic: src, Value: []byte("v")}})
	producer := maps.Clone(saslOnPlaintext)
	producer["message.timeout.ms"] = "1500"
	pl := pipeline(t, []cpath.Part{{Topic: src, Remote: dst}}, 0, producer)
	if err := pl.Assign([]int64{cpath.OffsetBeginning}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	deadline := start.Add(60 * time.Second)
	var failures []cpath.Failure
	for len(failures) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("the record neither delivered nor failed %v after it was produced (message.timeout.ms 1500)", time.Since(start))
		}
		b := pl.Step(10*time.Millisecond, cpath.MaxBatch)
		if len(b.Acked) > 0 {
			t.Fatalf("acknowledged %+v by a producer that cannot authenticate", b.Acked)
		}
		failures = append(failures, b.Failures...)
	}
	if f := failures[0]; f.Offset != 0 || !isTimedOut(f.Err) {
		t.Fatalf("failure %+v: want the record at offset 0 timed out", f)
	}
}

func isTimedOut(err error) bool {
	var ke ckafka.Error
	return errors.As(err, &ke) && ke.Code() == ckafka.ErrMsgTimedOut
}
