package kafka

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCreateTopicsChunks: a KRaft controller refuses a CreateTopics request needing more than 10,000 metadata
// records, so many topics go out in requests of a bounded partition count, in order, none empty; a topic
// larger than the bound is a request of its own.
func TestCreateTopicsChunks(t *testing.T) {
	var topics []NewTopic
	for i := range 1000 {
		topics = append(topics, NewTopic{Name: fmt.Sprintf("t%04d", i), Partitions: 10})
	}
	chunks := createTopicsChunks(topics, 4000)
	require.Len(t, chunks, 3)
	var names []string
	for _, c := range chunks {
		n := 0
		for _, nt := range c {
			n += nt.Partitions
			names = append(names, nt.Name)
		}
		require.LessOrEqual(t, n, 4000)
		require.NotEmpty(t, c)
	}
	require.Len(t, names, 1000)
	require.Equal(t, "t0000", names[0])
	require.Equal(t, "t0999", names[999])

	big := []NewTopic{{Name: "a", Partitions: 3}, {Name: "huge", Partitions: 5000}, {Name: "b", Partitions: -1, Config: map[string]string{"x": "1"}}}
	chunks = createTopicsChunks(big, 4000)
	require.Equal(t, [][]NewTopic{big[:1], big[1:2], big[2:]}, chunks)
	require.Equal(t, [][]NewTopic{big[:1]}, createTopicsChunks(big[:1], 4000))
}
