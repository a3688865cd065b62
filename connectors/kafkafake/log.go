package kafkafake

import (
	"fmt"
	"sort"
	"sync"
)

// Log is an in-memory cluster: its topics and their partitions' logs. It is safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	topics  map[string]*topic
	ids     int
	changed chan struct{} // closed and replaced on every change, to wake waiting consumers
	pollErr []error       // client-wide errors the consumers' next polls return
}

type topic struct {
	id    string
	parts []*partition
}

type partition struct {
	start, end int64   // log start offset; the offset the next entry gets
	entries    []entry // by offset, none below start
}

// entry is a record or a transaction marker at one offset.
type entry struct {
	offset int64
	msg    Message
	marker bool
	txn    *Txn // nil outside transactions
}

// NewLog returns an empty cluster.
func NewLog() *Log {
	return &Log{topics: map[string]*topic{}, changed: make(chan struct{})}
}

// changedLocked wakes the consumers waiting for a change.
func (l *Log) changedLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
}

// CreateTopic creates a topic with a new id and returns the id.
func (l *Log) CreateTopic(name string, partitions int) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.topics[name]; ok {
		return "", fmt.Errorf("create topic %s: already exists", name)
	}
	if partitions < 1 {
		return "", fmt.Errorf("create topic %s: %d partitions", name, partitions)
	}
	l.ids++
	t := &topic{id: fmt.Sprintf("fake-topic-id-%d", l.ids), parts: make([]*partition, partitions)}
	for i := range t.parts {
		t.parts[i] = &partition{}
	}
	l.topics[name] = t
	l.changedLocked()
	return t.id, nil
}

// DeleteTopic deletes a topic and its records.
func (l *Log) DeleteTopic(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.topics[name]; !ok {
		return fmt.Errorf("delete topic %s: %w", name, ErrUnknownTopic)
	}
	delete(l.topics, name)
	l.changedLocked()
	return nil
}

// TopicID returns a topic's id, "" when it does not exist.
func (l *Log) TopicID(name string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if t, ok := l.topics[name]; ok {
		return t.id
	}
	return ""
}

func (l *Log) partitionLocked(name string, p int32) (*partition, error) {
	t, ok := l.topics[name]
	if !ok || p < 0 || int(p) >= len(t.parts) {
		return nil, fmt.Errorf("%s [%d]: %w", name, p, ErrUnknownTopic)
	}
	return t.parts[p], nil
}

// Append writes records to a partition outside any transaction and returns their offsets.
func (l *Log) Append(name string, p int32, msgs ...Message) ([]int64, error) {
	return l.append(name, p, nil, msgs)
}

// AppendValues appends records with these values (and no key).
func (l *Log) AppendValues(name string, p int32, values ...string) ([]int64, error) {
	msgs := make([]Message, len(values))
	for i, v := range values {
		msgs[i].Value = []byte(v)
	}
	return l.Append(name, p, msgs...)
}

func (l *Log) append(name string, p int32, txn *Txn, msgs []Message) ([]int64, error) {
	offs := make([]int64, len(msgs))
	err := l.changePartition(name, p, func(part *partition) error {
		for i, m := range msgs {
			offs[i] = part.end
			part.entries = append(part.entries, entry{offset: part.end, msg: m, txn: txn})
			part.end++
		}
		if txn != nil {
			txn.touched(PartitionID{name, p}, offs[0])
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return offs, nil
}

// Skip leaves n offsets of a partition without records, as compaction does.
func (l *Log) Skip(name string, p int32, n int64) error {
	return l.changePartition(name, p, func(part *partition) error {
		part.end += max(n, 0)
		return nil
	})
}

// DeleteRecordsBefore moves a partition's log start to offset, as retention does.
func (l *Log) DeleteRecordsBefore(name string, p int32, offset int64) error {
	return l.changePartition(name, p, func(part *partition) error {
		if offset > part.end {
			return fmt.Errorf("delete records of %s [%d] before %d: %w", name, p, offset, ErrOffsetOutOfRange)
		}
		part.start = max(part.start, offset)
		i := sort.Search(len(part.entries), func(i int) bool { return part.entries[i].offset >= part.start })
		part.entries = part.entries[i:]
		return nil
	})
}

// changePartition applies change to a partition under the log's lock and, unless it fails, tells the log's
// readers that it changed.
func (l *Log) changePartition(name string, p int32, change func(*partition) error) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	part, err := l.partitionLocked(name, p)
	if err != nil {
		return err
	}
	if err := change(part); err != nil {
		return err
	}
	l.changedLocked()
	return nil
}

// Offsets returns a partition's log start and end offsets and its last stable offset.
func (l *Log) Offsets(name string, p int32) (start, end, stable int64, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	part, err := l.partitionLocked(name, p)
	if err != nil {
		return 0, 0, 0, err
	}
	return part.start, part.end, part.stable(), nil
}

// stable is the last stable offset: the first offset of the oldest open transaction, else the end.
func (part *partition) stable() int64 {
	for _, e := range part.entries {
		if e.txn != nil && e.txn.state == txnOpen {
			return e.offset
		}
	}
	return part.end
}

// visible tells whether a consumer with this isolation returns the entry.
func (e entry) visible(readCommitted bool) bool {
	if e.marker {
		return false
	}
	return !readCommitted || e.txn == nil || e.txn.state == txnCommitted
}

// Entry is what Entries lists of one offset.
type Entry struct {
	Offset  int64
	Message Message
	// Marker: a transaction's commit or abort marker. Committed, Aborted: the record's transaction ended so
	// (both false outside transactions and while open).
	Marker, Committed, Aborted bool
}

// Entries lists a partition's records and markers from its log start, for tests to audit.
func (l *Log) Entries(name string, p int32) ([]Entry, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	part, err := l.partitionLocked(name, p)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(part.entries))
	for i, e := range part.entries {
		out[i] = Entry{Offset: e.offset, Message: e.msg, Marker: e.marker}
		if e.txn != nil {
			out[i].Committed, out[i].Aborted = e.txn.state == txnCommitted, e.txn.state == txnAborted
		}
	}
	return out, nil
}

// FailNextPoll makes a consumer's next poll return err, a client-wide error (e.g. a retriable one, or
// ErrAuthentication).
func (l *Log) FailNextPoll(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.pollErr = append(l.pollErr, err)
	l.changedLocked()
}

type txnState int

const (
	txnOpen txnState = iota
	txnCommitted
	txnAborted
)

// Txn is a transaction writing to the log: its records are invisible to read_committed consumers, and hold
// the last stable offset back, until it commits; each partition it wrote to gets a marker when it ends.
type Txn struct {
	l     *Log
	state txnState
	parts []PartitionID
}

// BeginTxn opens a transaction.
func (l *Log) BeginTxn() *Txn { return &Txn{l: l} }

// Append writes records of the transaction to a partition.
func (tx *Txn) Append(name string, p int32, msgs ...Message) ([]int64, error) {
	if tx.state != txnOpen {
		return nil, fmt.Errorf("append to an ended transaction: %w", ErrState)
	}
	return tx.l.append(name, p, tx, msgs)
}

func (tx *Txn) touched(id PartitionID, _ int64) {
	for _, p := range tx.parts {
		if p == id {
			return
		}
	}
	tx.parts = append(tx.parts, id)
}

// Commit ends the transaction with commit markers.
func (tx *Txn) Commit() error { return tx.end(txnCommitted) }

// Abort ends the transaction with abort markers: its records are never visible to read_committed consumers.
func (tx *Txn) Abort() error { return tx.end(txnAborted) }

func (tx *Txn) end(state txnState) error {
	l := tx.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if tx.state != txnOpen {
		return fmt.Errorf("end an ended transaction: %w", ErrState)
	}
	tx.state = state
	for _, id := range tx.parts {
		if part, err := l.partitionLocked(id.Topic, id.Partition); err == nil { // a deleted topic needs no marker
			part.entries = append(part.entries, entry{offset: part.end, marker: true, txn: tx})
			part.end++
		}
	}
	l.changedLocked()
	return nil
}
