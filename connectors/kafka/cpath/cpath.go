package cpath

/*
#cgo CFLAGS: -O2 -std=gnu11 -Wall
#include <stdlib.h>
#include "cpath.h"
*/
import "C"

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	// The bundled static librdkafka comes with confluent-kafka-go's cgo flags, through package kafka: this
	// package's C code declares the functions it calls (rdk.h) and links against that same library.
	"github.com/kmirror/kmirror/connectors/kafka"
)

// NoTimestamp stands for a record without a timestamp.
const NoTimestamp = math.MinInt64

// MaxBatch bounds the records one Step consumes.
const MaxBatch = 4096

// Part is one source partition of a pipeline and the remote topic its records go to (same partition).
type Part struct {
	Topic     string
	Partition int32
	Remote    string
}

// Config configures a pipeline.
type Config struct {
	Consumer, Producer map[string]string // librdkafka properties; the consumer's must carry a group.id
	Parts              []Part
	// PaceBytes bounds, per partition, the key and value bytes produced but not yet reported delivered; 0
	// means no bound. Above PaceBytes × len(Parts), Step waits for deliveries instead of consuming.
	PaceBytes int64
	// OpenLatency bounds how many partitions may have a batch in the producer at once: as many as complete in
	// OpenLatency at the rate measured (at least 64), so that a record handed to the producer waits about
	// that long behind the others (librdkafka sends one partition per request). 0 means no bound. doc.go.
	OpenLatency time.Duration
	// OnStats receives librdkafka statistics (statistics.interval.ms) of the consumer or the producer; it is
	// called from Step, Flush and Take. json is librdkafka's own buffer, freed when OnStats returns: parse it,
	// never keep it (nor a substring of it).
	OnStats func(producer bool, json string)
	// Log receives librdkafka's log lines (nil: dropped), as package kafka forwards its clients'.
	Log *slog.Logger
}

// Pipeline is one consumer on the source feeding one producer on the target, records moving in C. Step,
// Steps, Flush, Take, Assign, Seek and Positions must be called from one goroutine at a time; Watermarks,
// CachedWatermarks, Interrupt, Purge, Fatal and AuthFailure from any. Close ends it.
type Pipeline struct {
	mu      sync.RWMutex // held for writing by Close only: it destroys p.c
	c       *C.cp_pipe
	parts   []Part
	onStats func(bool, string)
	log     *slog.Logger
	b       Batch // reused by Take
	// fatal and auth are the producer's first fatal error and failed authentication, set by Take (from the
	// producer's error events), read by Fatal and AuthFailure from any goroutine.
	fatal, auth atomic.Pointer[error]
	// The pipeline's own thread for Steps (doc.go, "A thread of its own"), started by New: it writes a byte
	// to wakeW when a run ends, and Steps waits for it on wake, in Go's poller. noRunner: the thread or its
	// pipe could not be had, or waiting for it failed, so Steps runs in the calling thread.
	wake, wakeW *os.File
	wakeBuf     [1]byte
	noRunner    bool
}

// Version returns the version of the librdkafka the package runs on.
func Version() string { return C.GoString(C.cp_version()) }

// New creates a pipeline's consumer and producer (no partition assigned yet: Assign).
func New(cfg Config) (*Pipeline, error) {
	var free []unsafe.Pointer
	defer func() {
		for _, p := range free {
			C.free(p)
		}
	}()
	cstr := func(s string) *C.char {
		c := C.CString(s)
		free = append(free, unsafe.Pointer(c))
		return c
	}
	props := func(m map[string]string) **C.char {
		arr := (**C.char)(C.calloc(C.size_t(2*len(m)+1), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		free = append(free, unsafe.Pointer(arr))
		s := unsafe.Slice(arr, 2*len(m)+1)
		i := 0
		for k, v := range m {
			s[i], s[i+1] = cstr(k), cstr(v)
			i += 2
		}
		return arr
	}
	n := len(cfg.Parts)
	ptrs := func() **C.char {
		arr := (**C.char)(C.calloc(C.size_t(max(n, 1)), C.size_t(unsafe.Sizeof((*C.char)(nil)))))
		free = append(free, unsafe.Pointer(arr))
		return arr
	}
	topics, remotes := ptrs(), ptrs()
	parts := (*C.int32_t)(C.calloc(C.size_t(max(n, 1)), 4))
	free = append(free, unsafe.Pointer(parts))
	ts, rs, ps := unsafe.Slice(topics, max(n, 1)), unsafe.Slice(remotes, max(n, 1)), unsafe.Slice(parts, max(n, 1))
	for i, p := range cfg.Parts {
		ts[i], rs[i], ps[i] = cstr(p.Topic), cstr(p.Remote), C.int32_t(p.Partition)
	}
	var errstr [512]C.char
	c := C.cp_pipe_new(props(cfg.Consumer), props(cfg.Producer), C.int(n), topics, parts, remotes, C.int64_t(cfg.PaceBytes),
		C.int64_t(cfg.OpenLatency.Nanoseconds()), &errstr[0], C.int(len(errstr)))
	if c == nil {
		return nil, fmt.Errorf("create the C data path: %s", kafka.RedactValues(C.GoString(&errstr[0])))
	}
	p := &Pipeline{c: c, parts: append([]Part(nil), cfg.Parts...), onStats: cfg.OnStats, log: cfg.Log}
	p.startThread()
	return p, nil
}

// OwnThread tells whether Steps runs in the pipeline's own thread (doc.go, "A thread of its own"); if not, it
// runs in the calling goroutine's.
func (p *Pipeline) OwnThread() bool { return !p.noRunner }

// Parts returns the pipeline's partitions; indexes into it are the Part fields of a Batch.
func (p *Pipeline) Parts() []Part { return p.parts }

// Start positions for Assign, as librdkafka has them.
const (
	OffsetBeginning = int64(-2)
	OffsetEnd       = int64(-1)
)

// Assign assigns every partition at starts[i]: an offset, OffsetBeginning or OffsetEnd.
func (p *Pipeline) Assign(starts []int64) error {
	if len(starts) != len(p.parts) {
		return fmt.Errorf("assign: %d starts for %d partitions", len(starts), len(p.parts))
	}
	if len(starts) == 0 {
		return nil
	}
	var errstr [256]C.char
	if C.cp_assign(p.c, (*C.int64_t)(unsafe.Pointer(&starts[0])), &errstr[0], C.int(len(errstr))) != 0 {
		return errors.New(C.GoString(&errstr[0]))
	}
	return nil
}

// Step serves delivery reports and, unless the pacing bound holds it back, consumes up to max records
// (waiting up to timeout for the first ones) and produces them. It returns what happened since the last
// Step or Take; the Batch is valid until the next call.
func (p *Pipeline) Step(timeout time.Duration, max int) *Batch {
	return p.StepWithin(timeout, max, -1)
}

// StepWithin is Step for a caller whose permission to write lasts only validFor from the call (negative: no
// bound): records the step has in hand once that has passed — say the process was stopped while the step
// waited for records — stay for a later step instead of going to the producer. The caller checks its
// permission again before the next step.
func (p *Pipeline) StepWithin(timeout time.Duration, max int, validFor time.Duration) *Batch {
	C.cp_step(p.c, C.int(timeout.Milliseconds()), C.int(max), C.int64_t(validFor.Nanoseconds()))
	return p.Take()
}

// Steps is StepWithin repeated for up to budget in one call, validFor counted from the call: it returns
// early once a step consumed nothing and holds nothing (the source is idle), once validFor has passed, or
// when something must reach the caller at once (a failure, a consumer or producer error, statistics, log
// lines, Interrupt). The Batch gathers every step's.
//
// One call per step was slower: at tasks.max 8 on two cores, source tasks stepping through Steps moved more
// records per second in 15 of 18 interleaved pairs and at less CPU per GB in 15 of 18 (medians 1.14× and
// -0.58 CPU s/GB; docs/benchmarks.md). Every return from C costs the Go side its bookkeeping and a wait for
// a P, which sysmon handed to another thread while the step waited in librdkafka.
//
// The steps run in the pipeline's own thread while the calling goroutine waits in Go's poller (doc.go, "A
// thread of its own"); the call is the same as if it ran them itself.
func (p *Pipeline) Steps(timeout time.Duration, max int, validFor, budget time.Duration) *Batch {
	if !p.OwnThread() {
		C.cp_run(p.c, C.int(timeout.Milliseconds()), C.int(max), C.int64_t(validFor.Nanoseconds()), C.int64_t(budget.Nanoseconds()))
		return p.Take()
	}
	C.cp_run_submit(p.c, C.int(timeout.Milliseconds()), C.int(max), C.int64_t(validFor.Nanoseconds()), C.int64_t(budget.Nanoseconds()))
	if _, err := p.wake.Read(p.wakeBuf[:]); err != nil {
		// The run still ends (cp_run_result waits for it in C), but the pipe can no longer be trusted to
		// carry one byte per run: the next calls run in this thread.
		p.noRunner = true
		if p.log != nil {
			p.log.Warn("waiting for the data path's thread failed: stepping in the task's own thread", "error", err)
		}
	}
	C.cp_run_result(p.c)
	return p.Take()
}

// startThread starts the pipeline's thread for Steps; without it (noRunner) Steps steps in the caller's.
func (p *Pipeline) startThread() {
	r, w, err := os.Pipe()
	if err == nil {
		if code := C.cp_runner_start(p.c, C.int(w.Fd())); code != 0 {
			err = fmt.Errorf("start thread: error %d", int(code))
			r.Close()
			w.Close()
		}
	}
	if err != nil {
		p.noRunner = true
		if p.log != nil {
			p.log.Warn("the data path has no thread of its own: stepping in the task's own thread", "error", err)
		}
		return
	}
	p.wake, p.wakeW = r, w
}

// ProducerReady serves the producer until it can send — an idempotent producer sends nothing before it has
// its producer id, which librdkafka asks for in 500 ms steps until a broker is up — or timeout or ctx ends,
// and tells whether it can. What the clients reported meanwhile is in the next Take.
func (p *Pipeline) ProducerReady(ctx context.Context, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for ctx.Err() == nil {
		left := time.Until(deadline)
		if left <= 0 {
			return false
		}
		if C.cp_producer_ready(p.c, C.int(min(left, 100*time.Millisecond).Milliseconds())) == 1 {
			return true
		}
	}
	return false
}

// Serve serves delivery reports and the clients' callbacks for up to timeout, consuming nothing; they are in
// the next Take.
func (p *Pipeline) Serve(timeout time.Duration) {
	C.cp_serve(p.c, C.int(timeout.Milliseconds()))
}

// Flush waits until every produced record has been reported, or ctx ends; it returns how many were left.
// The reports it served are in the next Take.
func (p *Pipeline) Flush(ctx context.Context) int {
	for {
		left := int(C.cp_flush(p.c, 100))
		if left == 0 || ctx.Err() != nil {
			return left
		}
	}
}

// Purge drops the records still queued in the producer, and with inFlight also those in flight; their
// reports fail (Failures, kafka.IsPurged). The pipeline produces nothing more after it: a record produced
// after the purge would be written ahead of the purged ones before it. It may be called while another
// goroutine steps the pipeline (it waits for the step to finish handing records to the producer).
func (p *Pipeline) Purge(inFlight bool) error {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.c == nil {
		return nil
	}
	f := C.int(0)
	if inFlight {
		f = 1
	}
	if code := C.cp_purge(p.c, f); code != 0 {
		return fmt.Errorf("purge producer: %w", kafka.CodeError(int(code), "", false))
	}
	return nil
}

// Outstanding returns the records produced and not yet reported.
func (p *Pipeline) Outstanding() int { return int(C.cp_outstanding(p.c)) }

// Interrupt makes a Step that waits for room in the producer's queue give up.
func (p *Pipeline) Interrupt() {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.c != nil {
		C.cp_interrupt(p.c)
	}
}

// Seek moves partition part (an index into Parts) to offset.
func (p *Pipeline) Seek(part int, offset int64) error {
	var errstr [256]C.char
	if code := C.cp_seek(p.c, C.int(part), C.int64_t(offset), &errstr[0], C.int(len(errstr))); code != 0 {
		return kafka.CodeError(int(code), C.GoString(&errstr[0]), false)
	}
	return nil
}

// Watermarks asks the source broker for partition part's low and high offsets.
func (p *Pipeline) Watermarks(part int, timeout time.Duration) (low, high int64, err error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.c == nil {
		return 0, 0, errors.New("pipeline closed")
	}
	var l, h C.int64_t
	if code := C.cp_watermarks(p.c, C.int(part), C.int(timeout.Milliseconds()), &l, &h); code != 0 {
		return 0, 0, fmt.Errorf("query watermarks of partition %d: %w", part, kafka.CodeError(int(code), "", false))
	}
	return int64(l), int64(h), nil
}

// CachedWatermarks returns the watermarks of partition part the consumer learned from its last fetch.
func (p *Pipeline) CachedWatermarks(part int) (low, high int64, err error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.c == nil {
		return 0, 0, errors.New("pipeline closed")
	}
	var l, h C.int64_t
	if code := C.cp_cached_watermarks(p.c, C.int(part), &l, &h); code != 0 {
		return 0, 0, kafka.CodeError(int(code), "", false)
	}
	return int64(l), int64(h), nil
}

// Positions returns each partition's consumer position (-1 when unknown).
func (p *Pipeline) Positions() ([]int64, error) {
	pos := make([]int64, len(p.parts))
	if len(pos) == 0 {
		return pos, nil
	}
	if code := C.cp_positions(p.c, (*C.int64_t)(unsafe.Pointer(&pos[0]))); code != 0 {
		return nil, fmt.Errorf("read consumer positions: %w", kafka.CodeError(int(code), "", false))
	}
	return pos, nil
}

// Fatal returns the producer's fatal error, if librdkafka raised one: the producer is unusable then. It is
// known from the Step, Flush or Take that served the event.
func (p *Pipeline) Fatal() error {
	if e := p.fatal.Load(); e != nil {
		return *e
	}
	return nil
}

// AuthFailure returns the producer's first failed authentication (kafka.IsAuthentication: a failed SASL or
// TLS handshake, a refused certificate), if any: records then wait for a connection that cannot succeed.
// It is known from the Step, Flush or Take that served the event.
func (p *Pipeline) AuthFailure() error {
	if e := p.auth.Load(); e != nil {
		return *e
	}
	return nil
}

// Close closes the consumer and destroys the producer, dropping whatever it still holds (Flush first).
func (p *Pipeline) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c != nil {
		left := int64(C.cp_pipe_destroy(p.c)) // stops the thread before its pipe is closed
		p.c = nil
		if left > 0 && p.log != nil {
			p.log.Warn("the target producer never reported some purged records; leaving the pipeline's clients behind (their memory and threads stay until the worker restarts)",
				"records", left)
		}
	}
	if p.wake != nil {
		p.wake.Close()
		p.wakeW.Close()
	}
}
