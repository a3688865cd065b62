package connectors

import (
	"context"
	"time"

	"github.com/kmirror/kmirror/tasks"
)

// FinalCommitContext is the context of a run's last commit. The stop contract (tasks.Task) has a run stopped
// hard still commit what the target acknowledged before it returns, so the commit outlives the stop budget
// (env.StopContext()), but not the run: one settle window after the budget is spent the runtime abandons the
// run and fences its writes. The returned func releases the context.
func FinalCommitContext(env tasks.TaskEnv) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-env.StopContext().Done():
		case <-ctx.Done():
			return
		}
		abandon := time.NewTimer(env.Lease().Settle())
		defer abandon.Stop()
		select {
		case <-abandon.C:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
