package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/kmirror/kmirror/api"
	"github.com/kmirror/kmirror/connectors/clientconfig"
	"github.com/kmirror/kmirror/connectors/mirrorconfig"
	"github.com/kmirror/kmirror/connectors/mm2file"
	"github.com/kmirror/kmirror/store"
)

// MM2Properties is an mm2.properties whose connectors a worker declares when it starts (kmirror serve
// --mm2-properties).
type MM2Properties struct {
	File *mm2file.File
	// Clusters are the targets this worker declares flows for (MM2's --clusters); empty: every cluster.
	Clusters []string
}

// declare validates every connector of the file as POST /connectors would, then converges the stored
// connectors to the valid ones (store.Declare).
func declare(ctx context.Context, st *store.Store, m *MM2Properties, eos mirrorconfig.ExactlyOnceSourceSupport,
	clients clientconfig.Options, log *slog.Logger,
) error {
	cs, err := m.File.Connectors(m.Clusters)
	if err != nil {
		return fmt.Errorf("%s: %w", m.File.Path, err)
	}
	rules := api.Config{ExactlyOnceSource: eos, Clients: clients}
	cs, problems := m.File.Validate(cs, func(c mm2file.Connector) string { return api.ValidateWrite(rules, c.Name, c.Config) })
	refused := map[string]bool{}
	for _, p := range problems {
		var inv *mm2file.InvalidError
		if errors.As(p, &inv) {
			refused[inv.Name] = true
		}
		// As MM2: a connector whose config is refused is not created (one declared before keeps its config).
		log.Warn("a connector of the mm2.properties is not declared: its config is invalid", "error", p)
	}
	var taken map[string]takeover
	if m.File.Takeover() {
		if taken, err = takeoverOffsets(ctx, st, clients, cs, log); err != nil {
			return err
		}
	}
	want := make([]store.Declared, len(cs))
	for i, c := range cs {
		want[i] = store.Declared{Name: c.Name, Config: c.Config, Offsets: taken[c.Name].offsets, TakenOver: taken[c.Name].took}
	}
	covered := declaredFor(m.Clusters)
	res, err := st.Declare(ctx, m.File.Path, want, func(c store.Connector) bool { return covered(c) && !refused[c.Name] })
	if err != nil {
		return fmt.Errorf("declare the connectors of %s: %w", m.File.Path, err)
	}
	log.Info("declared the connectors of an mm2.properties", "file", m.File.Path, "created", res.Created, "updated", res.Updated,
		"deleted", res.Deleted, "unchanged", len(res.Unchanged))
	if len(res.Skipped) > 0 {
		log.Warn("connectors created through the REST API take names the mm2.properties declares; they are left as they are",
			"file", m.File.Path, "connectors", res.Skipped)
	}
	return nil
}

// declaredFor says which stored connectors of the file a declaration covers: all of them, or with --clusters
// those whose flow's target is listed, so that workers serving different targets keep each other's.
func declaredFor(targets []string) func(store.Connector) bool {
	if len(targets) == 0 {
		return func(store.Connector) bool { return true }
	}
	return func(c store.Connector) bool {
		flow := c.Name[:max(strings.LastIndex(c.Name, "."), 0)]
		_, target, ok := strings.Cut(flow, "->")
		return ok && slices.Contains(targets, target)
	}
}
