// Package provenance names the cluster a record was first produced on, in a header kmirror writes on every
// record it copies, and decides from that header whether a source task may copy a record at all: it never
// copies a record back into the cluster it came from. Two flows A→B and B→A under an identity replication
// policy would otherwise copy each record back and forth forever (docs/provenance.md).
//
// The header is Header; its value is the origin cluster's alias and id, "<alias>@<cluster id>" in UTF-8 (the
// id empty when unknown). A cluster id is base64url, so the value splits at its last '@' whatever the alias
// holds. A record that already carries the header keeps it unchanged: the origin is where the record was
// first produced, however many hops it makes.
package provenance

import (
	"bytes"
	"errors"
)

// Header is the name of the provenance header. Leading underscores mark it as infrastructure, as Kafka's own
// internal names and Confluent Replicator's provenance header do; consumers and Java MM2 pass over headers
// they do not ask for.
const Header = "__kmirror_origin"

// Origin is a cluster as the header names it: its alias in the connector's config, and its cluster id ("" when
// unknown).
type Origin struct {
	Alias     string
	ClusterID string
}

// ErrMalformed: the header's value is not "<alias>@<cluster id>".
var ErrMalformed = errors.New("malformed provenance header")

// Encode returns o as the header's value.
func Encode(o Origin) []byte {
	b := make([]byte, 0, len(o.Alias)+1+len(o.ClusterID))
	b = append(b, o.Alias...)
	b = append(b, '@')
	return append(b, o.ClusterID...)
}

// Decode parses a header value Encode wrote.
func Decode(v []byte) (Origin, error) {
	i := bytes.LastIndexByte(v, '@')
	if i < 0 {
		return Origin{}, ErrMalformed
	}
	return Origin{Alias: string(v[:i]), ClusterID: string(v[i+1:])}, nil
}

// Same tells whether a and b name the same cluster: by cluster id when both know theirs, else by alias.
// Ids that differ tell two clusters apart even when a config gave them the same alias.
func Same(a, b Origin) bool {
	if a.ClusterID != "" && b.ClusterID != "" {
		return a.ClusterID == b.ClusterID
	}
	return a.Alias == b.Alias
}

// Action is what a source task does with one record.
type Action int

const (
	// Copy the record as it is: it carries a provenance header naming another cluster.
	Copy Action = iota
	// Stamp the record with the task's own header value, then copy it: it carries none.
	Stamp
	// Skip the record: it came from the task's target cluster.
	Skip
)

// Guard decides per record for one source task, from its source and target clusters.
type Guard struct {
	target Origin
	stamp  []byte
}

// NewGuard returns the guard of a task copying from source to target.
func NewGuard(source, target Origin) *Guard {
	return &Guard{target: target, stamp: Encode(source)}
}

// Stamp is the header value the task writes on records without one.
func (g *Guard) Stamp() []byte { return g.stamp }

// Target is the cluster the task writes to.
func (g *Guard) Target() Origin { return g.target }

// Decide tells what to do with a record whose provenance header has value v (present: the record has the
// header; the last one counts, as Kafka's Headers.lastHeader). A malformed value is copied as it is: it is
// not kmirror's to judge, and dropping a record on a guess would lose data.
func (g *Guard) Decide(v []byte, present bool) Action {
	if !present {
		return Stamp
	}
	o, err := Decode(v)
	if err != nil {
		return Copy
	}
	if Same(o, g.target) {
		return Skip
	}
	return Copy
}
