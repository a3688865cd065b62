package source

import (
	"sync"
	"time"
)

// syncGate keeps the offset syncs of a shared producer out of librdkafka while a batch of them is in flight.
//
// Why: offset syncs all go to partition 0 of one topic, and librdkafka 2.11.1's idempotent producer sends a
// partition one request at a time; while that request is outstanding, a record queued behind it whose
// linger.ms has expired makes the broker thread's poll timeout zero, and the thread spins until the answer
// comes. On a LAN the answer comes before the next batch's linger.ms is up, but in MM2's recommended WAN
// layout the offset-syncs topic is on the remote source cluster: with a 100 ms round trip and syncs lingering
// 50 ms, the thread spun for half of every round trip (the WAN runs in docs/benchmarks.md put a third of
// kmirror's CPU per GB there). The data path has the same rule (cpath's batch gate).
//
// So syncs join a batch only while librdkafka still holds it: from the first sync produced while nothing was
// in flight until 4/5 of linger.ms later, within one batch's bounds (batch.num.messages and batch.size).
// Past that, syncs wait in their syncer until every sync of the batch has been reported, and the gate then
// wakes every syncer that waited, which sends all it holds as the next batch. Whatever the round trip, a
// batch costs one request and the broker thread has nothing queued while it waits.
type syncGate struct {
	window   time.Duration // how long after its first sync a batch takes more
	maxCount int           // syncs per batch: batch.num.messages
	maxBytes int64         // estimated bytes per batch: batch.size less a request's overheads
	now      func() time.Time

	mu      sync.Mutex
	out     int            // syncs produced and not yet reported
	count   int            // syncs of the current batch
	bytes   int64          // their estimated size
	started time.Time      // when the current batch's first sync was admitted
	waiting map[any]func() // by the syncer that waits: its fire
}

// syncRecordOverhead is a sync's share of its record batch besides key and value (record framing, headers
// count, varints), generously; syncBatchReserve is what a ProduceRequest adds around the batch.
const (
	syncRecordOverhead = 48
	syncBatchReserve   = 512
)

// newSyncGate takes the gate's bounds from the producer's librdkafka properties, with librdkafka's defaults
// for what they do not set.
func newSyncGate(props map[string]string) *syncGate {
	batchBytes := min(propInt(props, libDefaultBatchSize, "batch.size"), propInt(props, libDefaultMessageMaxBytes, "message.max.bytes"))
	return &syncGate{
		window:   time.Duration(lingerMs(props) * float64(time.Millisecond) * 4 / 5),
		maxCount: max(int(propInt(props, libDefaultBatchNumMessages, "batch.num.messages")), 1),
		maxBytes: max(batchBytes-syncBatchReserve, 1),
		now:      time.Now,
		waiting:  map[any]func(){},
	}
}

// admit returns how many of n syncs of about size bytes each the caller may produce now (all of them only
// within one batch's bounds). When it admits fewer than n, wake is called once the batch in flight has been
// reported (once per waiter, which is who: the syncer); the caller must report every admitted sync through
// done, produced or not.
func (g *syncGate) admit(who any, n int, size int64, wake func()) int {
	if n <= 0 {
		return 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.out == 0 {
		g.count, g.bytes, g.started = 0, 0, g.now()
	} else if g.now().Sub(g.started) >= g.window {
		g.waiting[who] = wake
		return 0
	}
	k := 0
	for k < n && g.count < g.maxCount && (g.count == 0 || g.bytes+size <= g.maxBytes) {
		k++
		g.count++
		g.bytes += size
	}
	g.out += k
	if k < n {
		g.waiting[who] = wake
	}
	return k
}

// done reports one admitted sync as delivered, failed or never produced; the last of a batch opens the gate.
func (g *syncGate) done() {
	g.mu.Lock()
	g.out--
	var wake []func()
	if g.out == 0 {
		for who, w := range g.waiting {
			wake = append(wake, w)
			delete(g.waiting, who)
		}
	}
	g.mu.Unlock()
	for _, w := range wake {
		w()
	}
}
