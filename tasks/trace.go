package tasks

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// trace renders a failure for the status API: the error's message, then each distinct cause in the chain (the
// way a Java stack trace lists "Caused by:"), then where it happened. Connect puts a Java stack trace here;
// operators read it to find out why, so the chain matters more than Go frames. A cause's Go type is shown only
// when it says something: the wrappers of fmt and errors say nothing.
func trace(err error, w store.Work, workerID string) string {
	var b strings.Builder
	b.WriteString(err.Error())
	b.WriteString("\n")
	prev := err.Error()
	for cause := errors.Unwrap(err); cause != nil; cause = errors.Unwrap(cause) {
		if msg := cause.Error(); msg != prev {
			b.WriteString("Caused by: ")
			if t := fmt.Sprintf("%T", cause); !plainErrorTypes[t] {
				b.WriteString(t + ": ")
			}
			b.WriteString(msg + "\n")
			prev = msg
		}
	}
	var p *panicError
	if errors.As(err, &p) {
		b.WriteString(p.stack)
		b.WriteString("\n")
	}
	unit := "connector"
	if w.Task != store.ConnectorUnit {
		unit = "task " + TaskID{Connector: w.Connector, Task: w.Task}.String()
	}
	fmt.Fprintf(&b, "\tat %s of connector %q on worker %s (assignment epoch %d)", unit, w.Connector, workerID, w.Epoch)
	return b.String()
}

// plainErrorTypes are the error types that carry only a message (errors.New, fmt.Errorf, errors.Join).
var plainErrorTypes = map[string]bool{
	"*errors.errorString": true, "*fmt.wrapError": true, "*fmt.wrapErrors": true, "*errors.joinError": true,
}

// NoticeFailed is the kind of the notice a failed unit shows: its failure, so that a FAILED task or connector
// is among the notices as well as in its trace.
const NoticeFailed = "failed"

// putFailed records that the run of w holding c failed with err: FAILED, with the trace and a notice.
func (w *worker) putFailed(ctx context.Context, c store.Claim, wk store.Work, err error) error {
	n := kmtype.Notice{Kind: NoticeFailed, Message: err.Error()}
	perr := w.store.PutStatus(ctx, store.Status{Unit: c.Unit, State: store.StateFailed, WorkerID: w.id, Trace: trace(err, wk, w.id),
		Notices: []kmtype.Notice{n}, Epoch: c.Epoch})
	if perr == nil {
		w.observer.UnitState(c.Unit.Connector, c.Unit.Task, store.StateFailed)
		w.observer.UnitNotices(c.Unit.Connector, c.Unit.Task, []string{NoticeFailed})
	}
	return perr
}

// panicError carries a recovered panic and its stack, so a bug in a task becomes a FAILED status instead of
// taking the whole process down.
type panicError struct {
	value any
	stack string
}

func (p *panicError) Error() string { return fmt.Sprintf("panic: %v", p.value) }

// safely runs fn and turns a panic into a *panicError.
func safely(fn func() error) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &panicError{value: v, stack: string(debug.Stack())}
		}
	}()
	return fn()
}
