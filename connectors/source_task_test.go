package connectors

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPipelineDefaultsShareABudget checks that a connector's tasks divide its queue budget, within the
// per-task bounds, and that what the user set is kept.
func TestPipelineDefaultsShareABudget(t *testing.T) {
	for _, tc := range []struct {
		tasks                    int
		producerKiB, prefetchKiB string
	}{
		{0, "32768", "16384"},
		{1, "32768", "16384"},
		{2, "32768", "16384"},
		{4, "16384", "8192"},
		{8, "8192", "4096"},
		{100, "8192", "4096"},
	} {
		consumer, producer := map[string]string{}, map[string]string{}
		PipelineDefaults(consumer, producer, tc.tasks)
		require.Equal(t, map[string]string{"queue.buffering.max.kbytes": tc.producerKiB, "queue.buffering.max.messages": "0"}, producer, "tasks=%d", tc.tasks)
		require.Equal(t, map[string]string{"queued.max.messages.kbytes": tc.prefetchKiB, "fetch.queue.backoff.ms": "10"}, consumer, "tasks=%d", tc.tasks)
	}

	consumer := map[string]string{"queued.max.messages.kbytes": "65536", "fetch.queue.backoff.ms": "500"}
	producer := map[string]string{"queue.buffering.max.kbytes": "1024", "queue.buffering.max.messages": "1000"}
	PipelineDefaults(consumer, producer, 8)
	require.Equal(t, map[string]string{"queued.max.messages.kbytes": "65536", "fetch.queue.backoff.ms": "500"}, consumer)
	require.Equal(t, map[string]string{"queue.buffering.max.kbytes": "1024", "queue.buffering.max.messages": "1000"}, producer)
}
