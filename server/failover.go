package server

import (
	"context"

	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/failover"
	"github.com/kmirror/kmirror/store"
)

// runFailovers runs, until ctx is done, the failover and failback operations this worker takes (package
// failover); their clients follow the same rules for client settings as the connectors'.
func runFailovers(ctx context.Context, st *store.Store, clients clientconfig.Options, cfg Config) error {
	r := failover.NewRunner(st, clients, cfg.WorkerID, cfg.Loggers.Logger("kmirror.failover"))
	r.ExactlyOnceSource = cfg.ExactlyOnceSource
	return r.Run(ctx)
}
