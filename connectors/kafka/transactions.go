package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"sync"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
)

// The transactional API of a Producer created with a transactional.id (librdkafka's rd_kafka_*_transaction).
// A transaction is opened with BeginTransaction, filled with Produce or Forward, and ended with
// CommitTransaction or AbortTransaction; calls must not overlap, and records may be produced only while a
// transaction is open. The errors these calls return are classified with TxnRequiresAbort, IsRetriable and
// IsFenced; Producer.Fatal reports a fatal error that arrived as an event.

// InitTransactions registers the producer's transactional.id with its transaction coordinator. Kafka then
// bumps the id's producer epoch, which fences every older producer with the same id (a zombie's commits fail
// with a fenced error) and aborts any transaction such a producer left open, waiting for the abort to
// complete. ctx bounds the wait; a target that cannot serve transactions (transaction.state.log.replication.factor
// above its broker count, no transactional-id ACL) fails here.
func (p *Producer) InitTransactions(ctx context.Context) error {
	if err := p.p.InitTransactions(ctx); err != nil {
		return fmt.Errorf("init transactions: %w", err)
	}
	return nil
}

// BeginTransaction opens a transaction locally; Kafka learns of it with the first record.
func (p *Producer) BeginTransaction() error {
	if err := p.p.BeginTransaction(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	return nil
}

// CommitTransaction flushes every record of the open transaction and commits it. On a retriable error
// (IsRetriable, and not TxnRequiresAbort) the outcome is not known yet and the call may be repeated; with
// TxnRequiresAbort the transaction must be aborted; a fenced or fatal error ends the producer.
func (p *Producer) CommitTransaction(ctx context.Context) error {
	if err := p.p.CommitTransaction(ctx); err != nil {
		return fmt.Errorf("commit transaction: %w", err)
	}
	return nil
}

// AbortTransaction drops the records of the open transaction (purging those still queued) and writes abort
// markers, so that read_committed consumers never see them.
func (p *Producer) AbortTransaction(ctx context.Context) error {
	if err := p.p.AbortTransaction(ctx); err != nil {
		return fmt.Errorf("abort transaction: %w", err)
	}
	return nil
}

// TxnRequiresAbort tells whether a transactional call's error leaves the transaction only to be aborted.
func TxnRequiresAbort(err error) bool {
	var kerr ckafka.Error
	return errors.As(err, &kerr) && kerr.TxnRequiresAbort()
}

// IsFatal tells whether err is fatal to the producer (librdkafka: it must be closed and created again). A
// produce call on a producer in that state answers with the code "Local: Fatal error" but without the flag.
func IsFatal(err error) bool {
	var kerr ckafka.Error
	return errors.As(err, &kerr) && (kerr.IsFatal() || kerr.Code() == ckafka.ErrFatal)
}

// IsFenced tells whether err says a newer producer with the same transactional.id exists (or the coordinator
// bumped the id's epoch after the transaction timed out): this producer may write nothing more.
func IsFenced(err error) bool {
	return hasCode(err, ckafka.ErrFenced) || hasCode(err, ckafka.ErrProducerFenced) || hasCode(err, ckafka.ErrInvalidProducerEpoch)
}

// FenceTransactionalIDs fences every producer of the given transactional ids on the cluster props connect to,
// as the Java admin's fenceProducers does (librdkafka has no such call): a short-lived producer of each id
// initializes transactions, which bumps the id's epoch (an older producer can no longer send or commit, and
// the transaction it left open is aborted), and closes again. The ids are fenced concurrently; ctx bounds
// the whole.
func FenceTransactionalIDs(ctx context.Context, props map[string]string, ids []string, log *slog.Logger) error {
	errs := make([]error, len(ids))
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			p := maps.Clone(props)
			p["transactional.id"] = id
			p["enable.idempotence"] = "true"
			pr, err := NewProducer(p, log, func(Delivery) {})
			if err != nil {
				errs[i] = fmt.Errorf("fence transactional.id %s: %w", id, err)
				return
			}
			defer pr.Close()
			if err := pr.InitTransactions(ctx); err != nil {
				errs[i] = fmt.Errorf("fence transactional.id %s: %w", id, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
