package kafkafake_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafkafake"
)

// drain polls until nothing arrives and returns the offsets read and the first error.
func drain(t *testing.T, c *kafkafake.Consumer) ([]int64, error) {
	t.Helper()
	var offs []int64
	for {
		rec, ok, err := c.Poll(0)
		if err != nil {
			return offs, err
		}
		if !ok {
			return offs, nil
		}
		offs = append(offs, rec.Offset())
	}
}

func TestConsumerReadsAroundGapsMarkersAndAbortedRecords(t *testing.T) {
	l := kafkafake.NewLog()
	_, err := l.CreateTopic("t", 1)
	require.NoError(t, err)
	_, err = l.AppendValues("t", 0, "a", "b") // 0, 1
	require.NoError(t, err)
	require.NoError(t, l.Skip("t", 0, 2)) // 2, 3: compacted away
	committed := l.BeginTxn()
	_, err = committed.Append("t", 0, kafkafake.Message{Value: []byte("c")}) // 4
	require.NoError(t, err)
	require.NoError(t, committed.Commit()) // marker 5
	aborted := l.BeginTxn()
	_, err = aborted.Append("t", 0, kafkafake.Message{Value: []byte("d")}) // 6
	require.NoError(t, err)
	require.NoError(t, aborted.Abort()) // marker 7
	open := l.BeginTxn()
	_, err = open.Append("t", 0, kafkafake.Message{Value: []byte("e")}) // 8, holds the last stable offset
	require.NoError(t, err)

	start, end, stable, err := l.Offsets("t", 0)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 9, 8}, []int64{start, end, stable})

	rc := l.NewConsumer(kafkafake.ConsumerOptions{ReadCommitted: true})
	require.NoError(t, rc.Assign([]kafkafake.Start{{Topic: "t", Partition: 0, Offset: kafkafake.OffsetBeginning}}))
	offs, err := drain(t, rc)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 1, 4}, offs, "read_committed: no markers, no aborted or open records")
	pos, err := rc.Position([]kafkafake.Start{{Topic: "t", Partition: 0}})
	require.NoError(t, err)
	require.Equal(t, int64(8), pos[kafkafake.Start{Topic: "t", Partition: 0}], "the position is read past the abort marker, up to the last stable offset")
	low, high, err := rc.CachedWatermarks("t", 0)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 8}, []int64{low, high})

	ru := l.NewConsumer(kafkafake.ConsumerOptions{})
	require.NoError(t, ru.Assign([]kafkafake.Start{{Topic: "t", Partition: 0, Offset: 0}}))
	offs, err = drain(t, ru)
	require.NoError(t, err)
	require.Equal(t, []int64{0, 1, 4, 6, 8}, offs, "read_uncommitted: aborted and open records too, never markers")

	require.NoError(t, open.Commit()) // marker 9
	offs, err = drain(t, rc)
	require.NoError(t, err)
	require.Equal(t, []int64{8}, offs)

	entries, err := l.Entries("t", 0)
	require.NoError(t, err)
	require.Len(t, entries, 8) // 0, 1, 4, 5, 6, 7, 8, 9
	require.True(t, entries[3].Marker && entries[3].Committed)
	require.True(t, entries[4].Aborted)
}

func TestConsumerStopsOutOfRangeUntilSeek(t *testing.T) {
	l := kafkafake.NewLog()
	_, err := l.CreateTopic("t", 2)
	require.NoError(t, err)
	_, err = l.AppendValues("t", 1, "a", "b", "c", "d")
	require.NoError(t, err)
	require.NoError(t, l.DeleteRecordsBefore("t", 1, 2))

	c := l.NewConsumer(kafkafake.ConsumerOptions{})
	require.NoError(t, c.Assign([]kafkafake.Start{{Topic: "t", Partition: 1, Offset: 1}}))
	_, _, err = c.Poll(0)
	var pe *kafkafake.PartitionError
	require.ErrorAs(t, err, &pe)
	require.True(t, kafkafake.IsOffsetOutOfRange(err))
	require.Equal(t, int64(1), pe.Offset)
	_, ok, err := c.Poll(0)
	require.NoError(t, err, "a stopped partition reports once")
	require.False(t, ok)

	low, high, err := c.Watermarks("t", 1, time.Second)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 4}, []int64{low, high})
	require.NoError(t, c.Seek("t", 1, low))
	offs, err := drain(t, c)
	require.NoError(t, err)
	require.Equal(t, []int64{2, 3}, offs)
}

func TestDeletedAndRecreatedTopics(t *testing.T) {
	l := kafkafake.NewLog()
	first, err := l.CreateTopic("t", 1)
	require.NoError(t, err)
	_, err = l.AppendValues("t", 0, "a", "b", "c")
	require.NoError(t, err)
	c := l.NewConsumer(kafkafake.ConsumerOptions{})
	require.NoError(t, c.Assign([]kafkafake.Start{{Topic: "t", Partition: 0, Offset: 0}}))
	offs, err := drain(t, c)
	require.NoError(t, err)
	require.Len(t, offs, 3)

	require.NoError(t, l.DeleteTopic("t"))
	_, _, err = c.Poll(0)
	require.True(t, kafkafake.IsUnknownTopic(err), "a deleted topic: %v", err)
	ids, err := l.Admin().TopicIDs(context.Background(), []string{"t"})
	require.NoError(t, err)
	require.Empty(t, ids)

	second, err := l.CreateTopic("t", 1)
	require.NoError(t, err)
	require.NotEqual(t, first, second, "a re-created topic has a new id")
	_, err = l.AppendValues("t", 0, "x")
	require.NoError(t, err)
	require.NoError(t, c.Seek("t", 0, 3))
	_, _, err = c.Poll(0)
	require.True(t, kafkafake.IsOffsetOutOfRange(err), "the old position is past the new log's end: %v", err)

	shapes, err := l.Admin().TopicShapes(context.Background(), []string{"t", "missing"})
	require.NoError(t, err)
	require.Equal(t, map[string]kafkafake.TopicShape{"t": {ID: second, Partitions: 1}}, shapes)
	lo, errs, err := l.Admin().LogOffsets(context.Background(), []kafkafake.PartitionID{{Topic: "t", Partition: 0}, {Topic: "t", Partition: 5}}, false, true)
	require.NoError(t, err)
	require.Equal(t, kafkafake.LogOffsets{Start: 0, End: 1}, lo[kafkafake.PartitionID{Topic: "t", Partition: 0}])
	require.True(t, kafkafake.IsUnknownTopic(errs[kafkafake.PartitionID{Topic: "t", Partition: 5}]))
}

func TestPollWaitsForRecordsAndReturnsInjectedErrors(t *testing.T) {
	l := kafkafake.NewLog()
	_, err := l.CreateTopic("t", 1)
	require.NoError(t, err)
	c := l.NewConsumer(kafkafake.ConsumerOptions{})
	require.NoError(t, c.Assign([]kafkafake.Start{{Topic: "t", Partition: 0, Offset: kafkafake.OffsetEnd}}))
	_, ok, err := c.Poll(0)
	require.NoError(t, err)
	require.False(t, ok)

	got := make(chan int64, 1)
	go func() {
		rec, ok, err := c.Poll(10 * time.Second)
		if err != nil || !ok {
			got <- -1
			return
		}
		got <- rec.Offset()
	}()
	_, err = l.AppendValues("t", 0, "late")
	require.NoError(t, err)
	require.Equal(t, int64(0), <-got, "a waiting poll wakes for an appended record")

	l.FailNextPoll(kafkafake.ErrTimedOut)
	_, _, err = c.Poll(0)
	require.True(t, kafkafake.IsRetriable(err))
	_, _, err = c.Poll(0)
	require.NoError(t, err, "an injected error is returned once")
}
