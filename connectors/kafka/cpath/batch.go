package cpath

/*
#include <stdlib.h>
#include <string.h>
#include "cpath.h"
*/
import "C"

import (
	"context"
	"time"
	"unsafe"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// Batch is what moved through a pipeline since the last Step or Take: one entry per partition and kind of
// fact, never one per record.
type Batch struct {
	Forwarded      []Forwarded
	Acked          []Acked // per partition in delivery (= produce) order
	Failures       []Failure
	ConsumerErrors []ConsumerError
	// ProducerErrors are the producer's error events (fatal ones answer kafka.IsFatal). librdkafka retries
	// most of them itself; the pipeline keeps a fatal one and a failed authentication for Fatal and
	// AuthFailure.
	ProducerErrors []error
	Consumed       int   // records (and errors) the consumer returned
	InFlightBytes  int64 // key and value bytes produced and not yet reported
	OpenBatches    int   // partitions with records produced and not yet reported (bounded by Config.OpenLatency)
	Paced          bool  // the step waited for deliveries instead of consuming
	// TargetWait is the time spent waiting for the target: held back by pacing, or a full producer queue.
	TargetWait time.Duration
	// SourceWait is the time the steps that consumed nothing spent waiting for the source.
	SourceWait time.Duration
	// Pending is how many consumed records wait for room in the producer's queue; the next Step goes on with
	// them. The consumer's position is past them.
	Pending int
}

// Forwarded is what one partition handed to the producer in one step.
type Forwarded struct {
	Part        int   // index into Parts
	Records     int   // 0 when the step only re-read the partition (Reread)
	First, Last int64 // source offsets of the first and last record
	Next        int64 // the source offset the consumer returns next for the partition
	ValueBytes  int64
	SizeBytes   int64 // key, value and header bytes
	LastTS      int64 // source timestamp of the last record, Unix ms, or NoTimestamp
	FirstTS     int64 // source timestamp of the first record, Unix ms, or NoTimestamp
	// Reread: the partition's first record lay past where it was assigned, so it was dropped and the
	// partition is read again from there (see doc.go).
	Reread bool
	// Skipped records the cycle guard did not copy (SetProvenance), First..Last; an entry has Records or
	// Skipped, never both, and a partition's entries come in the order the records were consumed.
	Skipped int
}

// AckKind says what a run of delivery reports means.
type AckKind int

const (
	// Mapped: source offsets First..Last were written at Target..Target+(Last-First), both contiguous.
	Mapped AckKind = iota
	// Unmapped: Records records (last source offset Last) written without a target offset, after a
	// confirmed delivery of the partition from this producer (see doc.go).
	Unmapped
	// Dropped: reports on a partition whose delivery failed earlier: they count for nothing.
	Dropped
)

// Acked is a run of delivery reports of one partition.
type Acked struct {
	Part        int
	Kind        AckKind
	First, Last int64 // source offsets
	Target      int64 // target offset of First (Mapped only)
	Records     int64
	SizeBytes   int64
	LastTS      int64 // the last record's timestamp, Unix ms, or NoTimestamp
}

// Failure is the first failed delivery of a partition in the pipeline, or a record the producer refused.
type Failure struct {
	Part        int
	Offset      int64 // source offset of the record
	Err         error // nil when Unconfirmed
	Unconfirmed bool  // reported written without a target offset before any confirmed delivery (doc.go)
	Refused     bool  // the producer refused the record (not a delivery report); it was not forwarded
}

// ConsumerError is an error the consumer reported: about one partition (Part ≥ 0) or client-wide (-1).
type ConsumerError struct {
	Part   int
	Offset int64
	Err    error
}

// Take returns what happened since the last Step or Take (the reports Flush served, for one); the Batch is
// valid until the next call.
func (p *Pipeline) Take() *Batch {
	o := C.cp_out_of(p.c)
	b := &p.b
	b.Forwarded, b.Acked, b.Failures, b.ConsumerErrors = b.Forwarded[:0], b.Acked[:0], b.Failures[:0], b.ConsumerErrors[:0]
	b.ProducerErrors = b.ProducerErrors[:0]
	b.Consumed, b.InFlightBytes, b.Paced = int(o.consumed), int64(o.inflight_bytes), o.paced != 0
	b.TargetWait = time.Duration(o.target_wait_ns)
	b.SourceWait = time.Duration(o.source_wait_ns)
	b.OpenBatches = int(o.open_batches)
	b.Pending = int(o.pending)
	if o.nfwd > 0 {
		for _, f := range unsafe.Slice(o.fwd, int(o.nfwd)) {
			b.Forwarded = append(b.Forwarded, Forwarded{Part: int(f.part), Records: int(f.records), First: int64(f.first),
				Last: int64(f.last), Next: int64(f.next), ValueBytes: int64(f.value_bytes), SizeBytes: int64(f.size_bytes),
				LastTS: int64(f.last_ts), FirstTS: int64(f.first_ts), Reread: f.rereads != 0, Skipped: int(f.skipped)})
		}
	}
	if o.nacks > 0 {
		for _, a := range unsafe.Slice(o.acks, int(o.nacks)) {
			b.Acked = append(b.Acked, Acked{Part: int(a.part), Kind: AckKind(a.kind), First: int64(a.first), Last: int64(a.last),
				Target: int64(a.target), Records: int64(a.records), SizeBytes: int64(a.size_bytes), LastTS: int64(a.last_ts)})
		}
	}
	if o.nfails > 0 {
		for _, f := range unsafe.Slice(o.fails, int(o.nfails)) {
			fl := Failure{Part: int(f.part), Offset: int64(f.offset), Unconfirmed: f.unconfirmed != 0, Refused: f.fatal == -1}
			if !fl.Unconfirmed {
				fl.Err = kafka.CodeError(int(f.code), C.GoString(&f.msg[0]), false)
			}
			b.Failures = append(b.Failures, fl)
		}
	}
	if o.ncerrs > 0 {
		for _, e := range unsafe.Slice(o.cerrs, int(o.ncerrs)) {
			b.ConsumerErrors = append(b.ConsumerErrors, ConsumerError{Part: int(e.part), Offset: int64(e.offset),
				Err: kafka.CodeError(int(e.code), C.GoString(&e.msg[0]), e.fatal == 1)})
		}
	}
	if o.nperrs > 0 {
		for _, e := range unsafe.Slice(o.perrs, int(o.nperrs)) {
			err := kafka.CodeError(int(e.code), C.GoString(&e.msg[0]), e.fatal == 1)
			b.ProducerErrors = append(b.ProducerErrors, err)
			p.producerError(err)
		}
	}
	if o.nlogs > 0 && p.log != nil {
		for _, l := range unsafe.Slice(o.logs, int(o.nlogs)) {
			p.logLine(int(l.level), l.producer != 0, C.GoString(&l.fac[0]), C.GoString(&l.msg[0]))
		}
	}
	stats := o.stats != 0
	C.cp_out_reset(p.c)
	if stats && p.onStats != nil {
		for which, producer := range []bool{false, true} {
			if s := C.cp_take_stats(p.c, C.int(which)); s != nil {
				// Read in place (see Config.OnStats), not copied: a document is megabytes at a thousand
				// partitions.
				p.onStats(producer, unsafe.String((*byte)(unsafe.Pointer(s)), int(C.strlen(s))))
				C.free(unsafe.Pointer(s))
			}
		}
	}
	return b
}

// producerError keeps what the producer's error event err means for the pipeline, as package kafka's
// Producer does for its events: a fatal error (the producer is unusable) or a failed authentication (records
// wait for a connection that cannot succeed); the first of each is kept.
func (p *Pipeline) producerError(err error) {
	switch {
	case kafka.IsFatal(err):
		if p.fatal.CompareAndSwap(nil, &err) && p.log != nil {
			p.log.Log(context.Background(), kafka.FatalLevel(err), "producer fatal error", "error", err)
		}
	case kafka.IsAuthentication(err):
		if p.auth.CompareAndSwap(nil, &err) && p.log != nil {
			p.log.Debug("producer authentication failed", "error", err)
		}
	default:
		if p.log != nil {
			p.log.Debug("producer error", "error", err)
		}
	}
}

// logLine forwards one librdkafka log line (syslog level) to the pipeline's logger.
func (p *Pipeline) logLine(level int, producer bool, fac, msg string) {
	client := "consumer"
	if producer {
		client = "producer"
	}
	p.log.Log(context.Background(), kafka.LogLevel(level, fac, msg), msg, "client", client, "tag", fac)
}
