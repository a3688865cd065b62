package tasks

import (
	"testing"
	"time"
)

// A run's lease answers how long it still runs, consistently with Valid: the time left until the end its
// heartbeats extended it to, nothing once that has passed, and nothing for good once revoked.
func TestRunLeaseValidForCountsDownToTheEndAndZeroOnceRevoked(t *testing.T) {
	s := newSessionLease(time.Second)
	l := newRunLease(s)
	defer l.done()
	if l.Valid() || l.ValidFor() != 0 {
		t.Fatalf("a lease never extended: valid %v for %v", l.Valid(), l.ValidFor())
	}
	s.extend(time.Now().Add(time.Hour))
	if d := l.ValidFor(); !l.Valid() || d <= 59*time.Minute || d > time.Hour {
		t.Fatalf("extended by an hour: valid %v for %v", l.Valid(), d)
	}
	s.extend(time.Now()) // an earlier end never shortens it
	if d := l.ValidFor(); d <= 59*time.Minute {
		t.Fatalf("an earlier end shortened the lease to %v", d)
	}
	s.revoke()
	<-l.Revoked()
	if l.Valid() || l.ValidFor() != 0 {
		t.Fatalf("revoked: valid %v for %v", l.Valid(), l.ValidFor())
	}
}
