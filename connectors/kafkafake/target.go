package kafkafake

import "sync"

// Fault is what the target does with one delivery attempt.
type Fault int

const (
	// Accept writes the record and acknowledges it with its offset.
	Accept Fault = iota
	// Refuse does not write the record; its delivery fails with ErrTimedOut (retriable).
	Refuse
	// TooLarge does not write the record; its delivery fails with ErrRecordTooLarge.
	TooLarge
	// Delay holds the record, and every later one of its partition, until Target.Release.
	Delay
	// DropAck writes the record but loses the acknowledgement: its delivery fails with ErrTimedOut, so a
	// producer that retries writes a copy.
	DropAck
	// Unconfirmed writes the record and reports success without an offset (Delivery.Unconfirmed).
	Unconfirmed
	// GoFatal makes the producer fatal: this record and every later one fail with ErrFatal, none is written.
	GoFatal
	// Fence fences the producer's transactional id, as a newer producer with the same id does: GoFatal with
	// ErrFenced.
	Fence
	// AuthFail fails the producer's authentication: records wait, AuthFailure reports it, until Release.
	AuthFail
)

// Attempt describes one delivery attempt to a fault schedule.
type Attempt struct {
	Topic     string
	Partition int32
	Seq       int // attempts made before this one, over every producer of the target
}

// Target is a cluster that producers write to through a fault schedule, and that can run out of room.
type Target struct {
	*Log
	mu       sync.Mutex
	schedule func(Attempt) Fault
	seq      int
	room     int64             // records it can still take; < 0: no bound
	epochs   map[string]uint64 // transactional id -> current producer epoch
	released chan struct{}     // closed and replaced by Release
}

// NewTarget returns an empty target that accepts everything.
func NewTarget() *Target {
	return &Target{Log: NewLog(), room: -1, epochs: map[string]uint64{}, released: make(chan struct{})}
}

// SetFaults sets the schedule deciding each delivery attempt's fate (nil: accept everything).
func (t *Target) SetFaults(schedule func(Attempt) Fault) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.schedule = schedule
}

// SetRoom lets the target take n more records; past them deliveries fail with ErrNoRoom (retriable) and
// nothing is written. n < 0 removes the bound.
func (t *Target) SetRoom(n int64) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.room = n
}

// Release lets delayed records go, and clears authentication failures.
func (t *Target) Release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	close(t.released)
	t.released = make(chan struct{})
}

// Fence bumps the epoch of a transactional id: producers registered under it before are fenced.
func (t *Target) Fence(transactionalID string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.epochs[transactionalID]++
}

// decide returns the fault for one attempt, and whether the target has room for the record.
func (t *Target) decide(topic string, partition int32) (Fault, bool, <-chan struct{}) {
	t.mu.Lock()
	defer t.mu.Unlock()
	f := Accept
	if t.schedule != nil {
		f = t.schedule(Attempt{Topic: topic, Partition: partition, Seq: t.seq})
	}
	t.seq++
	return f, t.room != 0, t.released
}

// took counts a record written.
func (t *Target) took() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.room > 0 {
		t.room--
	}
}

// register gives a transactional producer the id's next epoch, fencing the producers before it.
func (t *Target) register(id string) uint64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.epochs[id]++
	return t.epochs[id]
}

func (t *Target) fenced(id string, epoch uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return id != "" && epoch != 0 && t.epochs[id] != epoch
}
