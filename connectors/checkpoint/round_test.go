package checkpoint

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/tasks"
)

// groupOffsetsEnv records what a checkpoint run stores; the rest of tasks.TaskEnv is not used.
type groupOffsetsEnv struct {
	tasks.TaskEnv
	groups []string
	rows   []kmtype.GroupOffset
}

func (e *groupOffsetsEnv) PutGroupOffsets(_ context.Context, groups []string, rows []kmtype.GroupOffset) error {
	e.groups, e.rows = groups, rows
	return nil
}

// TestOneGroupsIdNeverStopsTheOthers: a group whose id PostgreSQL text cannot hold is left out of what is
// stored, with a notice naming it; the other groups are stored, metadata bytes and all.
func TestOneGroupsIdNeverStopsTheOthers(t *testing.T) {
	env := &groupOffsetsEnv{}
	r := &checkpointRun{env: env}
	rows := []kmtype.GroupOffset{
		{Group: "good", Topic: "t", Metadata: "abc\x00\xff"},
		{Group: "bad\x00", Topic: "t"},
		{Group: "also-good", Topic: "t"},
	}
	require.NoError(t, r.publishGroupOffsets(context.Background(), []string{"good", "bad\x00", "also-good"}, rows))
	require.Equal(t, []string{"good", "also-good"}, env.groups)
	require.Len(t, env.rows, 2)
	require.Equal(t, "abc\x00\xff", env.rows[0].Metadata)
	require.Len(t, r.notices, 1)
	n := r.notices[groupNoticePrefix+"bad\x00"]
	require.Equal(t, NoticeGroupNotShown, n.Kind)
	require.Contains(t, n.Message, `"bad\x00"`)
}
