package chaos

import (
	"testing"
	"time"
)

// TestSourceTopicDeletedWhileStopped stops the connector while it is far behind, writes more records while it
// is stopped, deletes the source topic and resumes the connector.
// Expected: the records missing on B are exactly those the notices name: the stopped connector kept watching
// the topic's end offsets, so the records written while it was stopped are named too.
func TestSourceTopicDeletedWhileStopped(t *testing.T) {
	s := startBehind(t, "dels")
	s.c.stop(s.name)
	s.c.awaitStatus(s.name, "STOPPED", time.Minute, func(st connectorStatus) bool {
		return st.Connector.State == "STOPPED" && len(st.Tasks) == 0
	})
	perPartition, _ := deletedVolume()
	s.prod.Burst(perPartition / 2 * sourcePartitions) // never seen by a task: only the stopped connector's watch sees them
	waitFor(t.Context(), 4*time.Second)               // the stopped connector looks at the end offsets every 3 s
	notices := s.watchNotices()
	deletedAt := time.Now()
	s.deleteTopic()
	waitFor(t.Context(), 5*time.Second)
	s.c.resume(s.name)
	s.c.awaitStatus(s.name, "without tasks", 2*time.Minute, func(st connectorStatus) bool {
		return st.Connector.State == "RUNNING" && len(st.Tasks) == 0
	})
	res := s.auditGone(10 * time.Second)
	checkDeletionReport(t, res, notices.close(), deletedAt, sourcePartitions)
}
