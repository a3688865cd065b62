package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGeneratedFileIsCurrent fails when the dumps or the generator changed without go generate being run.
func TestGeneratedFileIsCurrent(t *testing.T) {
	want, err := generate("../../testdata/connect-4.1.1")
	require.NoError(t, err)
	got, err := os.ReadFile("../../config_gen.go")
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "run go generate ./connectors/mirrorconfig")
}

func TestGoName(t *testing.T) {
	for key, want := range map[string]string{
		"offset-syncs.topic.location": "OffsetSyncsTopicLocation",
		"tasks.max":                   "TasksMax",
		"sync.topic.acls.enabled":     "SyncTopicACLsEnabled",
		"name":                        "Name",
	} {
		require.Equal(t, want, goName(key), key)
	}
}
