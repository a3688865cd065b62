package metrics

// PartitionsMoved counts partitions a source connector's planner moved between its tasks by measured load:
// reason "spread" for a hot partition taken off an overloaded task, "pack" for the cold one that took its place.
// The counter lives on the worker running the connector's planner; sum it over workers.
func (r *Registry) PartitionsMoved(connector, reason string, n int) {
	r.moves.WithLabelValues(validLabel(connector), validLabel(reason)).Add(float64(n))
}
