package source

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/kmtype"
)

// maxNotices bounds the notices a task shows: loss notices of a long run (many retention gaps) must not grow
// its status without limit; the oldest go first.
const maxNotices = 20

// noticeBoard holds the notices a run shows in its task's status, by key, and whether they changed since they
// were last published. The poll loop, the delivery handler and the watchers set and clear them; the committer
// publishes them. Its zero value is empty and ready; it is safe for concurrent use.
type noticeBoard struct {
	noticeMu    sync.Mutex
	notices     map[string]kmtype.Notice
	noticeOrder []string    // notice keys, oldest first (may hold keys already cleared)
	hasNotices  atomic.Bool // lets the hot path skip the lock when there is nothing to clear
	dirty       atomic.Bool // notices changed since they were last published
}

// notice sets one of the task's status notices (by key).
func (b *noticeBoard) notice(key string, n kmtype.Notice) {
	b.noticeMu.Lock()
	defer b.noticeMu.Unlock()
	if b.notices == nil {
		b.notices = map[string]kmtype.Notice{}
	}
	if _, ok := b.notices[key]; !ok {
		b.noticeOrder = append(b.noticeOrder, key)
		for len(b.notices) >= maxNotices && len(b.noticeOrder) > 0 {
			oldest := b.noticeOrder[0]
			b.noticeOrder = b.noticeOrder[1:]
			if oldest != key {
				delete(b.notices, oldest)
			}
		}
	}
	if old, ok := b.notices[key]; !ok || old.Message != n.Message || old.Kind != n.Kind {
		b.notices[key] = n
		b.hasNotices.Store(true)
		b.dirty.Store(true)
	}
}

// hasNotice tells whether the notice of key is shown.
func (b *noticeBoard) hasNotice(key string) bool {
	b.noticeMu.Lock()
	defer b.noticeMu.Unlock()
	_, ok := b.notices[key]
	return ok
}

// clearNotice removes a notice, e.g. "source unreachable" once records flow again. It is on the hot path,
// so it looks before it locks.
func (b *noticeBoard) clearNotice(key string) {
	if !b.hasNotices.Load() {
		return
	}
	b.noticeMu.Lock()
	defer b.noticeMu.Unlock()
	if _, ok := b.notices[key]; ok {
		delete(b.notices, key)
		b.hasNotices.Store(len(b.notices) > 0)
		b.dirty.Store(true)
	}
}

// noticeList returns the notices in the order of their keys, so that the status reads the same every time.
func (b *noticeBoard) noticeList() []kmtype.Notice {
	b.noticeMu.Lock()
	defer b.noticeMu.Unlock()
	keys := slices.Sorted(maps.Keys(b.notices))
	out := make([]kmtype.Notice, 0, len(keys))
	for _, k := range keys {
		out = append(out, b.notices[k])
	}
	return out
}

// publishNotices hands the notices to report when they changed since they were last published; when report
// fails they count as changed still, so the next call tries again.
func (b *noticeBoard) publishNotices(ctx context.Context, report func(context.Context, []kmtype.Notice) error) error {
	if !b.dirty.Swap(false) {
		return nil
	}
	if err := report(ctx, b.noticeList()); err != nil {
		b.dirty.Store(true)
		return err
	}
	return nil
}

// lossPartitions returns the partitions the task has reported records of as lost (retention, a truncated or
// re-created source log) in the notices it shows: they are truncated for as long as the status says so.
func (b *noticeBoard) lossPartitions() map[mirror.TopicPartition]bool {
	if !b.hasNotices.Load() {
		return nil
	}
	b.noticeMu.Lock()
	defer b.noticeMu.Unlock()
	var out map[mirror.TopicPartition]bool
	for _, n := range b.notices {
		if (n.Kind == NoticeDataNotReplicated || n.Kind == NoticeSourceTruncated) && n.Partition != nil {
			if out == nil {
				out = map[mirror.TopicPartition]bool{}
			}
			out[mirror.TopicPartition{Topic: n.Topic, Partition: *n.Partition}] = true
		}
	}
	return out
}
