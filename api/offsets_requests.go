package api

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/kmirror/kmirror/kmtype"
	"github.com/kmirror/kmirror/store"
)

// In exactly-once mode a MirrorSourceConnector's offsets live in the offsets topic on the target as well as in
// PostgreSQL, and the API writes no Kafka: it files the change (store.RequestOffsets) and waits until the
// worker holding the STOPPED connector has written it to the offsets topic, after fencing the connector's
// tasks, and then to PostgreSQL (tasks/fence.go). The answer says success only once both happened.

// offsetsRequestTimeout bounds the wait for a filed offsets change (Connect's REST request timeout is 90 s).
// The worker gives up on Kafka well before (connectors' offsetsWriteTimeout) and says why.
const offsetsRequestTimeout = 60 * time.Second

// offsetsRequestPoll is how often the API looks at a filed change's outcome.
const offsetsRequestPoll = 100 * time.Millisecond

// requestOffsets files the change and waits for its outcome; ErrNotFound and ErrNotStopped as AlterOffsets.
func (s *server) requestOffsets(r *http.Request, name string, offsets []kmtype.Offset, reset bool) error {
	id, err := s.Store.RequestOffsets(r.Context(), name, offsets, reset)
	if err != nil {
		return err
	}
	what := "alter"
	if reset {
		what = "reset"
	}
	ctx, cancel := context.WithTimeout(r.Context(), offsetsRequestTimeout)
	defer cancel()
	ticker := time.NewTicker(offsetsRequestPoll)
	defer ticker.Stop()
	for {
		state, failure, err := s.Store.OffsetRequestOutcome(ctx, id)
		switch {
		case err != nil && ctx.Err() == nil:
			return err
		case state == store.OffsetRequestDone:
			return nil
		case state == store.OffsetRequestFailed:
			return errorf(http.StatusInternalServerError, "Failed to %s the offsets of connector %s: %s", what, name, failure)
		}
		select {
		case <-ctx.Done():
			return s.expiredOffsetsRequest(id, name, what)
		case <-ticker.C:
		}
	}
}

// expiredOffsetsRequest answers a change that did not complete in time: withdrawn if no worker took it yet,
// of unknown outcome if one is applying it.
func (s *server) expiredOffsetsRequest(id int64, name, what string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	state, err := s.Store.ExpireOffsetRequest(ctx, id)
	switch {
	case err != nil:
		return fmt.Errorf("withdraw offsets request %d: %w", id, err)
	case state == store.OffsetRequestDone:
		return nil
	case state == store.OffsetRequestFailed:
		_, failure, err := s.Store.OffsetRequestOutcome(ctx, id)
		if err != nil {
			return err
		}
		return errorf(http.StatusInternalServerError, "Failed to %s the offsets of connector %s: %s", what, name, failure)
	case state == store.OffsetRequestExpired:
		return errorf(http.StatusInternalServerError, "Failed to %s the offsets of connector %s: no worker applied the change within %s, "+
			"so it was withdrawn and nothing was changed (a worker with exactly-once source support must be running the connector's STOPPED instance)",
			what, name, offsetsRequestTimeout)
	}
	return errorf(http.StatusInternalServerError, "Failed to %s the offsets of connector %s: the change did not complete within %s; "+
		"it may still be applied: check GET /connectors/%s/offsets", what, name, offsetsRequestTimeout, name)
}
