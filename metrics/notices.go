package metrics

import "strconv"

// UnitNotices records the kinds of the notices a unit on this worker shows now (a connector instance when task
// is -1): one series per kind shown, valued by how many notices of that kind, and none for kinds not shown, so
// that `kmirror_unit_notices{kind="target_unreachable"} > 0` is an alert and a cleared notice leaves no series
// behind. It implements tasks.Observer.
func (r *Registry) UnitNotices(connector string, task int, kinds []string) {
	c, t := validLabel(connector), strconv.Itoa(task)
	r.rtMu.Lock() // one unit's delete and sets must not interleave with another call for it
	defer r.rtMu.Unlock()
	r.notices.DeletePartialMatch(map[string]string{"connector": c, "task": t})
	for _, k := range kinds {
		r.notices.WithLabelValues(c, t, validLabel(k)).Inc()
	}
}
