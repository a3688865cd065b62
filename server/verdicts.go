package server

import (
	"context"
	"errors"
	"fmt"

	"github.com/kmirror/kmirror/metrics"
	"github.com/kmirror/kmirror/parallelism"
	"github.com/kmirror/kmirror/store"
)

// parallelismVerdicts is the leader's source of the verdict gauges: the verdicts GET /connectors/{c}/partitions
// shows, for every MirrorSourceConnector.
func parallelismVerdicts(st *store.Store) metrics.VerdictSource {
	return func(ctx context.Context) ([]metrics.Verdict, error) {
		cs, err := st.ListConnectors(ctx)
		if err != nil {
			return nil, fmt.Errorf("verdict gauges: %w", err)
		}
		var out []metrics.Verdict
		for _, c := range cs {
			if !parallelism.IsMirrorSource(c) {
				continue
			}
			facts, err := parallelism.Gather(ctx, st, c)
			if errors.Is(err, store.ErrNotFound) { // deleted meanwhile
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("verdict gauges: %w", err)
			}
			for _, v := range facts.Build().Verdicts {
				out = append(out, metrics.Verdict{Connector: c.Name, Kind: v.Kind, Severity: v.Severity, Tasks: v.TaskIDs})
			}
		}
		return out, nil
	}
}
