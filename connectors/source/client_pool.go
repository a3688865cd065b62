package source

import (
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// clientPool shares one client among the tasks of a worker that would otherwise each open an identical one:
// clients with exactly the same properties are one client, opened by the first task that asks for it and
// closed when the last one gives it back. Each librdkafka instance costs threads, buffers and a metadata cache
// of every topic it was asked about, which at thousands of partitions is most of a task's memory beside its
// consumer and producer (see acquireAdmin).
type clientPool[C any] struct {
	open  func(props map[string]string) (C, error)
	close func(C) // called without the pool's lock: it may flush

	mu      sync.Mutex
	clients map[string]*pooledClient[C]
}

type pooledClient[C any] struct {
	client C
	refs   int
}

func newClientPool[C any](open func(map[string]string) (C, error), close func(C)) *clientPool[C] {
	return &clientPool[C]{open: open, close: close, clients: map[string]*pooledClient[C]{}}
}

// acquire returns the pool's client for exactly these properties, opening it if needed, and a release
// function the caller must call once it no longer uses the client (calling it again does nothing).
func (cp *clientPool[C]) acquire(props map[string]string) (C, func(), error) {
	key := poolKey(props)
	cp.mu.Lock()
	defer cp.mu.Unlock()
	entry, ok := cp.clients[key]
	if !ok {
		c, err := cp.open(props)
		if err != nil {
			var zero C
			return zero, nil, err
		}
		entry = &pooledClient[C]{client: c}
		cp.clients[key] = entry
	}
	entry.refs++
	var once sync.Once
	release := func() { once.Do(func() { cp.release(key, entry) }) }
	return entry.client, release, nil
}

func (cp *clientPool[C]) release(key string, entry *pooledClient[C]) {
	cp.mu.Lock()
	entry.refs--
	last := entry.refs == 0
	if last {
		delete(cp.clients, key)
	}
	cp.mu.Unlock()
	if last {
		cp.close(entry.client)
	}
}

func poolKey(props map[string]string) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(props)) {
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(props[k])
		b.WriteByte('\n')
	}
	return b.String()
}

// adminPool shares the admin clients of a worker's C-path source tasks. On the Go path a task's admin requests
// ride on its consumer and producer; a C pipeline's clients cannot carry them, so each task would open two
// librdkafka instances of its own, each with its threads and a metadata cache of every topic the task reads or
// writes — at 10,000 partitions dealt round-robin over eight tasks, every topic in all sixteen.
type adminPool = clientPool[*kafka.Admin]

// taskAdminTimeout bounds each request of a source task's admin clients, the Go path's (riding on its consumer
// and producer) and the C path's pooled ones alike: a request of the pipeline's start or its identity watch
// waits no longer than that.
const taskAdminTimeout = 10 * time.Second

func newAdminPool(log *slog.Logger) *adminPool {
	return newClientPool(func(props map[string]string) (*kafka.Admin, error) {
		a, err := kafka.NewAdmin(props, log)
		if err != nil {
			return nil, err
		}
		a.Timeout = taskAdminTimeout // before any user sees it: the field is not guarded
		return a, nil
	}, (*kafka.Admin).Close)
}
