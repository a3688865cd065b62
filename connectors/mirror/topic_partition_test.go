package mirror

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestTopicPartitionString(t *testing.T) {
	require.Equal(t, "topic-3", TopicPartition{Topic: "topic", Partition: 3}.String())
	require.Equal(t, "my-topic-0", TopicPartition{Topic: "my-topic", Partition: 0}.String())
}

func TestParseTopicPartitionSplitsAtLastDash(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want TopicPartition
	}{
		{"topic-3", TopicPartition{"topic", 3}},
		{"my-topic-12", TopicPartition{"my-topic", 12}},
		{"a-b-c-0", TopicPartition{"a-b-c", 0}},
		{"-7", TopicPartition{"", 7}},
		{"t-+5", TopicPartition{"t", 5}}, // Integer.parseInt accepts a plus sign
		// A negative partition does not round-trip, in Java either.
		{"t--1", TopicPartition{"t-", 1}},
	} {
		got, err := ParseTopicPartition(tc.in)
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func TestParseTopicPartitionRejectsMalformed(t *testing.T) {
	for _, in := range []string{"", "topic", "topic-", "topic-x", "topic-99999999999"} {
		_, err := ParseTopicPartition(in)
		require.Error(t, err, in)
	}
}
