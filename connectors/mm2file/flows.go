package mm2file

import (
	"fmt"
	"slices"
	"strings"
)

// Flow is an ordered pair of cluster aliases: one MM2 herder.
type Flow struct {
	Source, Target string
}

// String is MM2's SourceAndTarget form, "A->B".
func (fl Flow) String() string { return fl.Source + flowSeparator + fl.Target }

// prefix is the key prefix of the flow's overrides, "A->B.".
func (fl Flow) prefix() string { return fl.String() + "." }

// ClusterPairs is MirrorMakerConfig.clusterPairs: every ordered pair of distinct aliases whose flow is enabled
// or whose heartbeats are on, sorted.
func (f *File) ClusterPairs() []Flow {
	globalHeartbeats := true
	if v, ok := f.props[keyEmitHeartbeats]; ok {
		globalHeartbeats = parseBoolean(v)
	}
	var out []Flow
	for _, s := range f.clusters {
		for _, t := range f.clusters {
			if s == t {
				continue
			}
			fl := Flow{Source: s, Target: t}
			heartbeats := globalHeartbeats
			if v, ok := f.props[fl.prefix()+keyEmitHeartbeats]; ok {
				heartbeats = parseBoolean(v)
			}
			if f.FlowEnabled(fl) || heartbeats {
				out = append(out, fl)
			}
		}
	}
	return out
}

// FlowEnabled says whether "A->B.enabled" is true: MM2 replicates on a flow only then.
func (f *File) FlowEnabled(fl Flow) bool { return parseBoolean(f.props[fl.prefix()+keyEnabled]) }

// Herders are the flows MirrorMaker runs when started with --clusters targets (all clusters when empty): the
// cluster pairs whose target is listed. None is MM2's ErrNoFlows.
func (f *File) Herders(targets []string) ([]Flow, error) {
	if len(targets) == 0 {
		targets = f.clusters
	}
	for _, t := range targets {
		if !slices.Contains(f.clusters, t) {
			// MM2 silently runs nothing for an unknown alias; naming it saves a search.
			return nil, fmt.Errorf("--clusters: %q is not one of the file's clusters (%s)", t, strings.Join(f.clusters, ", "))
		}
	}
	var out []Flow
	for _, fl := range f.ClusterPairs() {
		if slices.Contains(targets, fl.Target) {
			out = append(out, fl)
		}
	}
	if len(out) == 0 {
		return nil, ErrNoFlows
	}
	return out, nil
}

// parseBoolean is Java's Boolean.parseBoolean: "true" in any case is true, anything else false.
func parseBoolean(s string) bool { return strings.EqualFold(s, "true") }
