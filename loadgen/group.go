package loadgen

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/kmirror/kmirror/connectors/kafka"
)

// groupCommitter plays the application a failover would move: every second it commits, as cfg.Group, the end
// of what was produced to each partition, as a consumer that keeps up would. The checkpoint connector then has
// a group to translate. It commits through the admin API, so it needs no consumer of its own.
type groupCommitter struct {
	mu   sync.Mutex
	next map[int32]int64 // partition -> offset after the last acknowledged record
}

func (g *groupCommitter) delivered(d kafka.Delivery) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if d.Offset+1 > g.next[d.Partition] {
		g.next[d.Partition] = d.Offset + 1
	}
}

func (g *groupCommitter) run(ctx context.Context, cfg Config, log *slog.Logger) {
	a, err := kafka.NewAdmin(map[string]string{"bootstrap.servers": cfg.Bootstrap}, log)
	if err != nil {
		log.Error("group offsets: admin client", "error", err)
		return
	}
	defer a.Close()
	every(ctx, time.Second, func() {
		g.mu.Lock()
		list := make([]kafka.GroupOffset, 0, len(g.next))
		for p, o := range g.next {
			list = append(list, kafka.GroupOffset{Topic: cfg.Topic, Partition: p, Offset: o})
		}
		g.mu.Unlock()
		if len(list) == 0 {
			return
		}
		if err := a.AlterGroupOffsets(ctx, cfg.Group, list); err != nil && ctx.Err() == nil {
			// The coordinator may be loading or moving; the next second tries again.
			log.Debug("commit group offsets", "group", cfg.Group, "error", err)
		}
	})
}

// every calls f every interval until ctx is done.
func every(ctx context.Context, interval time.Duration, f func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}
