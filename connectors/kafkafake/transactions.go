package kafkafake

import (
	"context"
	"fmt"
)

// InitTransactions registers the producer's transactional id, fencing every older producer with the same id.
func (p *Producer) InitTransactions(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p.o.TransactionalID == "" {
		return fmt.Errorf("init transactions without a transactional id: %w", ErrState)
	}
	epoch := p.t.register(p.o.TransactionalID)
	p.mu.Lock()
	defer p.mu.Unlock()
	p.epoch = epoch
	return nil
}

// BeginTransaction opens a transaction.
func (p *Producer) BeginTransaction() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.txnUsableLocked(); err != nil {
		return fmt.Errorf("begin transaction: %w", err)
	}
	if p.epoch == 0 || p.txn != nil {
		return fmt.Errorf("begin transaction: %w", ErrState)
	}
	p.txn, p.txnFailed = p.t.BeginTxn(), false
	return nil
}

// txnUsableLocked returns the fatal error of a fenced or failed producer.
func (p *Producer) txnUsableLocked() error {
	if p.fatal == nil && p.t.fenced(p.o.TransactionalID, p.epoch) {
		p.fatal = ErrFenced
	}
	return p.fatal
}

// CommitTransaction delivers every record of the open transaction and commits it. If ctx ends first the
// outcome is not known yet (ErrTimedOut, retriable); if a record failed the transaction must be aborted
// (TxnRequiresAbort); a fenced or fatal producer fails.
func (p *Producer) CommitTransaction(ctx context.Context) error {
	if left := p.Flush(ctx); left > 0 {
		return fmt.Errorf("commit transaction: %d records outstanding: %w", left, ErrTimedOut)
	}
	return p.endTxn("commit transaction", func(tx *Txn) error {
		if p.txnFailed {
			return ErrTxnAbortable
		}
		return tx.Commit()
	})
}

// AbortTransaction drops the open transaction's queued records (their deliveries fail with ErrPurged) and ends
// it with abort markers.
func (p *Producer) AbortTransaction(ctx context.Context) error {
	if err := p.Purge(true); err != nil {
		return err
	}
	p.Flush(ctx)
	return p.endTxn("abort transaction", (*Txn).Abort)
}

// endTxn ends the open transaction with end, unless the producer is fenced or failed; the transaction stays
// open when end fails.
func (p *Producer) endTxn(what string, end func(*Txn) error) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.txnUsableLocked(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if p.txn == nil {
		return fmt.Errorf("%s: none open: %w", what, ErrState)
	}
	if err := end(p.txn); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	p.txn, p.txnFailed = nil, false
	return nil
}
