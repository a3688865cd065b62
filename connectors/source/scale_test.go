package source

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/connectors/mirror"
	"github.com/kmirror/kmirror/connectors/offsetmap"
)

// TestClientStatsEvery: the statistics interval grows with the partitions a client serves (its document has an
// entry per partition), from 5 s up to a minute.
func TestClientStatsEvery(t *testing.T) {
	require.Equal(t, 5*time.Second, clientStatsEvery(0))
	require.Equal(t, 5*time.Second, clientStatsEvery(250))
	require.Equal(t, 25*time.Second, clientStatsEvery(1250))
	require.Equal(t, time.Minute, clientStatsEvery(10000))
}

// TestPartitionNeedsPrune: a partition's stored offset map is pruned only when that can delete something: it
// has stored ranges, and stored new ones or saw its log start move since the last pruning.
func TestPartitionNeedsPrune(t *testing.T) {
	p := newSourcePartition(mirror.TopicPartition{Topic: "t", Partition: 0}, "A.t", -1, "")
	require.False(t, p.needsPrune(0), "nothing stored")
	require.False(t, p.needsPrune(100), "nothing stored, whatever the log start")

	p.rangesStored(offsetmap.Snapshot{})
	require.True(t, p.needsPrune(0))
	p.pruned(0)
	require.False(t, p.needsPrune(0), "pruned, nothing new")
	require.True(t, p.needsPrune(50), "the log start moved")
	p.pruned(50)
	require.False(t, p.needsPrune(50))
	p.rangesStored(offsetmap.Snapshot{})
	require.True(t, p.needsPrune(50), "new ranges stored")
}
