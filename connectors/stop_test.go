package connectors

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kmirror/kmirror/tasks"
)

// stopEnv is a TaskEnv with a stop context and a lease's settle window; nothing else of it is called.
type stopEnv struct {
	tasks.TaskEnv
	stop   context.Context
	settle time.Duration
}

func (e stopEnv) StopContext() context.Context { return e.stop }
func (e stopEnv) Lease() tasks.Lease           { return settleLease{settle: e.settle} }

// settleLease is a Lease of which only Settle is called.
type settleLease struct {
	tasks.Lease
	settle time.Duration
}

func (l settleLease) Settle() time.Duration { return l.settle }

func TestFinalCommitContextOutlivesTheStopBudgetBySettle(t *testing.T) {
	stop, hardStop := context.WithCancel(context.Background())
	ctx, release := FinalCommitContext(stopEnv{stop: stop, settle: 50 * time.Millisecond})
	defer release()
	require.NoError(t, ctx.Err(), "before the stop budget is spent")
	hardStop()
	require.NoError(t, ctx.Err(), "a run stopped hard still commits")
	select {
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the final commit's context outlived the settle window after the hard stop")
	}

	ctx, release = FinalCommitContext(stopEnv{stop: context.Background(), settle: time.Millisecond})
	release()
	require.Error(t, ctx.Err(), "released")
}
