package kmtype

import "errors"

// ErrFenced is returned when a write comes from a run that no longer holds its unit, or from a worker session
// that was declared dead: the unit has been reassigned, restarted or abandoned and the writer must stop.
var ErrFenced = errors.New("fenced: assignment epoch is no longer current")
