package tasks

// Observer is told what this worker's units are doing, for metrics. The runtime calls it where it writes a
// status (after the store accepted the write), when a unit is assigned here and when it leaves; calls come
// from many goroutines and must be quick. task is store.ConnectorUnit (-1) for a connector instance, else the
// task's index; state is a store state (RUNNING, FAILED, ...; UNASSIGNED while a unit assigned here has not
// started yet). UnitNotices gives the kinds of the notices a RUNNING unit shows beside its state (a source that
// does not answer, records lost to retention, ...; none when a status write cleared them). Config.Observer may
// be nil.
type Observer interface {
	UnitState(connector string, task int, state string)
	UnitNotices(connector string, task int, kinds []string)
	UnitGone(connector string, task int)
	Leader(leader bool)
}

type nopObserver struct{}

func (nopObserver) UnitState(string, int, string)     {}
func (nopObserver) UnitNotices(string, int, []string) {}
func (nopObserver) UnitGone(string, int)              {}
func (nopObserver) Leader(bool)                       {}
