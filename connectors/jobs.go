package connectors

import (
	"context"
	"time"
)

// Backoff after a failed job: 1 s, doubling, at most 15 s. A failed job retries on this schedule even
// when its interval is longer, so a cluster that was briefly unreachable at start does not leave the
// connector without a plan for a whole refresh interval, and the connector shows RUNNING again soon after
// the cluster is back.
const (
	JobRetryMin = time.Second
	JobRetryMax = 15 * time.Second
)

// DropWhenDone drops err when ctx is done: the run is ending anyway.
func DropWhenDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}
