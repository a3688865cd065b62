package kafka_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	ckafka "github.com/confluentinc/confluent-kafka-go/v2/kafka"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/kafka"
	"github.com/kmirror/kmirror/connectors/kafka/kafkatest"
)

const groupWait = 60 * time.Second

// TestGroupAdmin walks a consumer group of each protocol through the admin operations the checkpoint connector
// needs: listing, offsets with metadata, state while a member is subscribed and after it left, and altering
// offsets (refused while the member is there, accepted once the group is empty).
func TestGroupAdmin(t *testing.T) {
	for _, protocol := range []string{"classic", "consumer"} {
		t.Run(protocol, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			const partitions = 3
			topic := kafkatest.TopicName(t, "groups")
			group := kafkatest.TopicName(t, "group")
			unknown := kafkatest.TopicName(t, "no-such-group")
			kafkatest.CreateTopic(t, "A", topic, partitions, nil)
			var records []kafkatest.Record
			for i := range 30 {
				records = append(records, kafkatest.Record{Topic: topic, Partition: int32(i % partitions), Value: []byte(fmt.Sprint(i))})
			}
			kafkatest.Produce(t, "A", records)
			admin := kafkatest.Admin(t, "A")

			c, err := ckafka.NewConsumer(&ckafka.ConfigMap{
				"bootstrap.servers": kafkatest.Bootstrap(t, "A"), "group.id": group, "group.protocol": protocol,
				"enable.auto.commit": false, "auto.offset.reset": "earliest",
			})
			require.NoError(t, err)
			closed := false
			t.Cleanup(func() {
				if !closed {
					_ = c.Close()
				}
			})
			require.NoError(t, c.Subscribe(topic, nil))
			// Polling hands the assignment over and keeps the member alive: it is also what every wait below
			// waits with while the consumer is subscribed.
			poll := func() { _ = c.Poll(100) }
			awaitTrue(t, "consumer assigned every partition", poll, func() (bool, string) {
				as, err := c.Assignment()
				return err == nil && len(as) == partitions, fmt.Sprintf("assignment %v (%v)", as, err)
			})

			// Partition 2 gets no commit: GroupOffsets must leave it out.
			meta0, meta1 := "meta-0", "meta-1 with spaces"
			_, err = c.CommitOffsets([]ckafka.TopicPartition{
				{Topic: &topic, Partition: 0, Offset: 3, Metadata: &meta0},
				{Topic: &topic, Partition: 1, Offset: 5, Metadata: &meta1},
			})
			require.NoError(t, err)

			awaitTrue(t, "ListGroups finds the group", poll, func() (bool, string) {
				groups, err := admin.ListGroups(ctx)
				return err == nil && slices.Contains(groups, group), fmt.Sprintf("%d groups (%v)", len(groups), err)
			})
			groups, err := admin.ListGroups(ctx)
			require.NoError(t, err)
			require.True(t, slices.IsSorted(groups), "sorted")
			require.NotContains(t, groups, unknown)

			offsets, failed, err := admin.GroupOffsets(ctx, []string{group, unknown})
			require.NoError(t, err)
			require.Empty(t, failed)
			require.Equal(t, []kafka.GroupOffset{
				{Topic: topic, Partition: 0, Offset: 3, Metadata: meta0},
				{Topic: topic, Partition: 1, Offset: 5, Metadata: meta1},
			}, offsets[group])
			require.Contains(t, offsets, unknown, "an unknown group has no offsets, which is no error")
			require.Empty(t, offsets[unknown])

			awaitTrue(t, "group Stable with one member", poll, func() (bool, string) {
				states, err := admin.DescribeGroups(ctx, []string{group, unknown})
				if err != nil {
					return false, err.Error()
				}
				s := states[group]
				return s.State == "Stable" && s.Members == 1 && s.Exists, fmt.Sprintf("%+v", s)
			})
			states, err := admin.DescribeGroups(ctx, []string{group, unknown})
			require.NoError(t, err)
			require.Equal(t, kafka.GroupState{Group: group, State: "Stable", Members: 1, Exists: true}, states[group])
			require.Equal(t, kafka.GroupState{Group: unknown, State: "Dead", Members: 0, Exists: false}, states[unknown])

			err = admin.AlterGroupOffsets(ctx, group, []kafka.GroupOffset{{Topic: topic, Partition: 0, Offset: 9}})
			require.Error(t, err, "altering the offsets of an active group")
			t.Logf("alter while a member is active: %v", err)
			require.True(t, kafka.IsGroupActive(err), "IsGroupActive(%v)", err)
			require.False(t, kafka.IsGroupActive(fmt.Errorf("wrapped: %w", context.DeadlineExceeded)))

			require.NoError(t, c.Close())
			closed = true
			awaitTrue(t, "group Empty after the consumer closed", nil, func() (bool, string) {
				states, err := admin.DescribeGroups(ctx, []string{group})
				if err != nil {
					return false, err.Error()
				}
				s := states[group]
				return s.State == "Empty" && s.Members == 0 && s.Exists, fmt.Sprintf("%+v", s)
			})

			require.NoError(t, admin.AlterGroupOffsets(ctx, group, []kafka.GroupOffset{
				{Topic: topic, Partition: 0, Offset: 7, Metadata: "altered"},
				{Topic: topic, Partition: 2, Offset: 10},
			}))
			offsets, failed, err = admin.GroupOffsets(ctx, []string{group})
			require.NoError(t, err)
			require.Empty(t, failed)
			require.Equal(t, []kafka.GroupOffset{
				{Topic: topic, Partition: 0, Offset: 7, Metadata: "altered"},
				{Topic: topic, Partition: 1, Offset: 5, Metadata: meta1},
				{Topic: topic, Partition: 2, Offset: 10},
			}, offsets[group])
		})
	}
}

// TestGroupOffsetsContext shows that the context bounds GroupOffsets as a whole: once it has ended the call
// fails as a request, with no per-group results.
func TestGroupOffsetsContext(t *testing.T) {
	t.Parallel()
	admin := kafkatest.Admin(t, "A")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	offsets, failed, err := admin.GroupOffsets(ctx, []string{kafkatest.TopicName(t, "g1"), kafkatest.TopicName(t, "g2")})
	require.ErrorIs(t, err, context.Canceled)
	assert.Nil(t, offsets)
	assert.Nil(t, failed)

	offsets, failed, err = admin.GroupOffsets(context.Background(), nil)
	require.NoError(t, err)
	assert.Empty(t, offsets)
	assert.Empty(t, failed)
}

// awaitTrue waits up to groupWait for cond, calling step (or waiting 100 ms when step is nil) between tries.
func awaitTrue(t *testing.T, what string, step func(), cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(groupWait)
	for {
		ok, last := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last: %s", what, groupWait, last)
		}
		if step != nil {
			step()
		} else {
			<-time.After(100 * time.Millisecond)
		}
	}
}
