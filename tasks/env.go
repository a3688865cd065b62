package tasks

import (
	"context"
	"log/slog"

	"github.com/kmirror/kmirror/store"
)

// connectorEnv is the ConnectorEnv of one connector instance run.
type connectorEnv struct {
	w    *worker
	work store.Work
	log  *slog.Logger
}

func (e *connectorEnv) Running(ctx context.Context) error {
	return e.w.putStatus(ctx, e.work, store.StateRunning, "")
}

func (e *connectorEnv) SetTaskConfigs(ctx context.Context, configs []map[string]string) error {
	changed, err := e.w.store.ReplaceTaskConfigs(ctx, e.work.Connector, e.work.Epoch, configs)
	if err != nil {
		return err
	}
	if changed {
		e.log.Info("published task configs", "tasks", len(configs))
	}
	return nil
}

func (e *connectorEnv) Report(ctx context.Context, notice string) error {
	return e.w.putStatus(ctx, e.work, store.StateRunning, notice)
}

func (e *connectorEnv) Logger() *slog.Logger { return e.log }

// taskEnv is the TaskEnv of one task run.
type taskEnv struct {
	w    *worker
	work store.Work
	log  *slog.Logger
}

func (e *taskEnv) Running(ctx context.Context) error {
	return e.w.putStatus(ctx, e.work, store.StateRunning, "")
}

func (e *taskEnv) ReadOffsets(ctx context.Context) ([]Offset, error) {
	return e.w.store.Offsets(ctx, e.work.Connector)
}

func (e *taskEnv) CommitOffsets(ctx context.Context, offsets []Offset) error {
	return e.w.store.CommitOffsets(ctx, e.work.Connector, e.work.Task, e.work.Epoch, offsets)
}

func (e *taskEnv) RecordTopics(ctx context.Context, topics []string) error {
	return e.w.store.RecordTopics(ctx, e.work.Connector, topics)
}

func (e *taskEnv) Report(ctx context.Context, notice string) error {
	return e.w.putStatus(ctx, e.work, store.StateRunning, notice)
}

func (e *taskEnv) Logger() *slog.Logger { return e.log }
