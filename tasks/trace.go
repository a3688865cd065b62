package tasks

import (
	"errors"
	"fmt"
	"runtime/debug"
	"strings"

	"github.com/kmirror/kmirror/store"
)

// trace renders a failure for the status API: the error, then each distinct cause in the chain with its Go type
// (the way a Java stack trace lists "Caused by:"), then where it happened. Connect puts a Java stack trace here;
// operators read it to find out why, so the chain matters more than Go frames.
func trace(err error, w store.Work, workerID string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%T: %s\n", err, err.Error())
	prev := err.Error()
	for cause := errors.Unwrap(err); cause != nil; cause = errors.Unwrap(cause) {
		if msg := cause.Error(); msg != prev {
			fmt.Fprintf(&b, "Caused by: %T: %s\n", cause, msg)
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
