package kafkafake_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafkafake"
)

// reports collects deliveries.
type reports struct {
	mu sync.Mutex
	ds []kafkafake.Delivery
}

func (r *reports) add(d kafkafake.Delivery) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ds = append(r.ds, d)
}

func (r *reports) all() []kafkafake.Delivery {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]kafkafake.Delivery(nil), r.ds...)
}

// script returns a fault schedule that plays faults in order from its first attempt on, then accepts.
func script(faults ...kafkafake.Fault) func(kafkafake.Attempt) kafkafake.Fault {
	first := -1
	return func(a kafkafake.Attempt) kafkafake.Fault {
		if first < 0 {
			first = a.Seq
		}
		if i := a.Seq - first; i < len(faults) {
			return faults[i]
		}
		return kafkafake.Accept
	}
}

func newTarget(t *testing.T, partitions int) *kafkafake.Target {
	t.Helper()
	tg := kafkafake.NewTarget()
	_, err := tg.CreateTopic("r", partitions)
	require.NoError(t, err)
	return tg
}

func produce(t *testing.T, p *kafkafake.Producer, partition int32, values ...string) {
	t.Helper()
	for _, v := range values {
		require.NoError(t, p.Produce("r", partition, nil, []byte(v), nil, time.Time{}, v))
	}
}

func values(t *testing.T, tg *kafkafake.Target, partition int32) []string {
	t.Helper()
	es, err := tg.Entries("r", partition)
	require.NoError(t, err)
	var out []string
	for _, e := range es {
		if !e.Marker {
			out = append(out, string(e.Message.Value))
		}
	}
	return out
}

func TestTargetFaults(t *testing.T) {
	tg := newTarget(t, 1)
	tg.SetFaults(script(kafkafake.Accept, kafkafake.Refuse, kafkafake.DropAck, kafkafake.Unconfirmed, kafkafake.TooLarge))
	var rs reports
	p := tg.NewProducer(rs.add, kafkafake.ProducerOptions{Manual: true})
	defer p.Close()
	produce(t, p, 0, "a", "b", "c", "d", "e")
	require.Equal(t, 5, p.Outstanding())
	require.Equal(t, 5, p.Deliver(-1))
	ds := rs.all()
	require.Equal(t, int64(0), ds[0].Offset)
	require.NoError(t, ds[0].Err)
	require.True(t, kafkafake.IsRetriable(ds[1].Err), "refused")
	require.True(t, kafkafake.IsRetriable(ds[2].Err), "acknowledgement dropped")
	require.True(t, ds[3].Unconfirmed)
	require.NoError(t, ds[3].Err)
	require.True(t, kafkafake.IsRecordTooLarge(ds[4].Err))
	require.Equal(t, []any{"a", "b", "c", "d", "e"}, []any{ds[0].Opaque, ds[1].Opaque, ds[2].Opaque, ds[3].Opaque, ds[4].Opaque})
	require.Equal(t, []string{"a", "c", "d"}, values(t, tg, 0), "a dropped acknowledgement and an unconfirmed one are written; a refusal is not")
}

func TestDelayHoldsItsPartitionOnly(t *testing.T) {
	tg := newTarget(t, 2)
	tg.SetFaults(script(kafkafake.Delay))
	var rs reports
	p := tg.NewProducer(rs.add, kafkafake.ProducerOptions{Manual: true})
	defer p.Close()
	produce(t, p, 0, "a0", "b0")
	produce(t, p, 1, "a1")
	require.Equal(t, 1, p.Deliver(-1), "partition 0 waits behind its delayed record")
	require.Equal(t, "a1", rs.all()[0].Opaque)
	require.Equal(t, 2, p.Outstanding())

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	require.Equal(t, 2, p.Flush(ctx), "a flush cannot finish while a record is held")
	tg.Release()
	require.Equal(t, 0, p.Flush(context.Background()))
	require.Equal(t, []string{"a0", "b0"}, values(t, tg, 0), "order within the partition is kept")
}

func TestFatalAndRoomAndPurge(t *testing.T) {
	tg := newTarget(t, 1)
	tg.SetRoom(1)
	var rs reports
	p := tg.NewProducer(rs.add, kafkafake.ProducerOptions{Manual: true})
	defer p.Close()
	produce(t, p, 0, "a", "b")
	p.Deliver(-1)
	require.NoError(t, rs.all()[0].Err)
	require.ErrorIs(t, rs.all()[1].Err, kafkafake.ErrNoRoom)
	require.True(t, kafkafake.IsRetriable(rs.all()[1].Err))

	tg.SetRoom(-1)
	tg.SetFaults(func(kafkafake.Attempt) kafkafake.Fault { return kafkafake.GoFatal })
	produce(t, p, 0, "c", "d")
	p.Deliver(1)
	require.True(t, kafkafake.IsFatal(p.Fatal()))
	tg.SetFaults(nil)
	p.Deliver(-1)
	require.True(t, kafkafake.IsFatal(rs.all()[3].Err), "every later record fails too")
	require.True(t, kafkafake.IsFatal(p.Produce("r", 0, nil, nil, nil, time.Time{}, nil)))

	q := tg.NewProducer(rs.add, kafkafake.ProducerOptions{Manual: true})
	defer q.Close()
	tg.SetFaults(script(kafkafake.AuthFail))
	produce(t, q, 0, "e", "f")
	q.Deliver(-1)
	require.True(t, kafkafake.IsAuthentication(q.AuthFailure()))
	require.Equal(t, 2, q.Outstanding(), "records wait while authentication fails")
	require.NoError(t, q.Purge(true))
	require.Equal(t, 0, q.Flush(context.Background()))
	ds := rs.all()
	require.True(t, kafkafake.IsPurged(ds[len(ds)-1].Err))
	require.Equal(t, []string{"a"}, values(t, tg, 0))
}

func TestTransactionsCommitAbortAndFence(t *testing.T) {
	tg := newTarget(t, 1)
	var rs reports
	p := tg.NewProducer(rs.add, kafkafake.ProducerOptions{TransactionalID: "x"})
	defer p.Close()
	require.Error(t, p.Produce("r", 0, nil, nil, nil, time.Time{}, nil), "outside a transaction")
	ctx := context.Background()
	require.NoError(t, p.InitTransactions(ctx))
	require.NoError(t, p.BeginTransaction())
	produce(t, p, 0, "a", "b")
	require.NoError(t, p.CommitTransaction(ctx))
	require.NoError(t, p.BeginTransaction())
	produce(t, p, 0, "c")
	require.NoError(t, p.AbortTransaction(ctx))

	tg.SetFaults(script(kafkafake.Refuse))
	require.NoError(t, p.BeginTransaction())
	produce(t, p, 0, "d")
	err := p.CommitTransaction(ctx)
	require.True(t, kafkafake.TxnRequiresAbort(err), "a failed record: %v", err)
	require.NoError(t, p.AbortTransaction(ctx))

	c := tg.NewConsumer(kafkafake.ConsumerOptions{ReadCommitted: true})
	require.NoError(t, c.Assign([]kafkafake.Start{{Topic: "r", Partition: 0, Offset: kafkafake.OffsetBeginning}}))
	offs, err := drain(t, c)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 1}, offs, "only the committed transaction's records are read")

	newer := tg.NewProducer(rs.add, kafkafake.ProducerOptions{TransactionalID: "x"})
	defer newer.Close()
	require.NoError(t, newer.InitTransactions(ctx))
	err = p.BeginTransaction()
	require.True(t, kafkafake.IsFenced(err), "the older producer is fenced: %v", err)
	require.True(t, kafkafake.IsFatal(p.Fatal()))

	require.NoError(t, newer.BeginTransaction())
	tg.SetFaults(script(kafkafake.Fence))
	produce(t, newer, 0, "e")
	require.True(t, kafkafake.IsFenced(newer.CommitTransaction(ctx)))
}

func TestAutomaticDeliveryAndQueueFull(t *testing.T) {
	tg := newTarget(t, 1)
	var rs reports
	manual := tg.NewProducer(rs.add, kafkafake.ProducerOptions{Manual: true, QueueLimit: 2})
	defer manual.Close()
	produce(t, manual, 0, "a", "b")
	require.ErrorIs(t, manual.Produce("r", 0, nil, nil, nil, time.Time{}, nil), kafkafake.ErrQueueFull)
	require.Equal(t, 0, manual.Flush(context.Background()))

	auto := tg.NewProducer(rs.add, kafkafake.ProducerOptions{})
	defer auto.Close()
	produce(t, auto, 0, "c", "d")
	require.Equal(t, 0, auto.Flush(context.Background()), "the producer's own goroutine delivers")
	require.Len(t, rs.all(), 4)
	require.Equal(t, []string{"a", "b", "c", "d"}, values(t, tg, 0))
}
