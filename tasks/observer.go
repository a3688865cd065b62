package tasks

// Observer is told what this worker's units are doing, for metrics. The runtime calls it where it writes a
// status (after the store accepted the write), when a unit is assigned here and when it leaves; calls come
// from many goroutines and must be quick. task is store.ConnectorUnit (-1) for a connector instance, else the
// task's index; state is a store state (RUNNING, FAILED, ...; UNASSIGNED while a unit assigned here has not
// started yet). UnitNotices gives the kinds of the notices a RUNNING (or PAUSED) unit shows beside its state (a
// source that does not answer, records lost to retention, ...; none when a status write cleared them).
// Config.Observer may be nil.
type Observer interface {
	UnitState(connector string, task int, state string)
	UnitNotices(connector string, task int, kinds []string)
	UnitGone(connector string, task int)
	Leader(leader bool)
	// Assignment tells, on every reconcile, how many connector instances and tasks the store assigns to this
	// worker (named worker), whether or not their runs have started.
	Assignment(worker string, connectors, tasks int)
	// Rebalancing tells when this worker starts and ends an assignment change: it is true while a unit that
	// left the worker has not stopped yet (its run drains and releases the unit for its next owner), a unit
	// that arrived has not been claimed yet (its previous holder has not released it), or a task whose config
	// changed (a new task set) has not been claimed again (its old run drains, and the new one waits for every
	// run of the old set). There is no cluster-wide stop-the-world rebalance in kmirror; this is the nearest
	// honest counterpart of Connect's rebalancing.
	Rebalancing(rebalancing bool)
	// Database tells after every heartbeat whether it reached PostgreSQL.
	Database(reachable bool)
}

type nopObserver struct{}

func (nopObserver) UnitState(string, int, string)     {}
func (nopObserver) UnitNotices(string, int, []string) {}
func (nopObserver) UnitGone(string, int)              {}
func (nopObserver) Leader(bool)                       {}
func (nopObserver) Assignment(string, int, int)       {}
func (nopObserver) Rebalancing(bool)                  {}
func (nopObserver) Database(bool)                     {}
