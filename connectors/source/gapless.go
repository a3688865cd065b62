package source

import "log/slog"

// requireGapless makes an idempotent replication producer stop for good (a fatal error) after any failed
// request that could leave a gap in a partition's records, where librdkafka would otherwise bump its epoch and
// write the records behind the gap, ahead of the failed ones the next pipeline sends again. librdkafka's
// guarantee does not cover message.timeout.ms: the overdue watch does (overdue.go).
func requireGapless(producer map[string]string, log *slog.Logger) {
	const key = "enable.gapless.guarantee"
	if producer["enable.idempotence"] != "true" {
		return
	}
	if v, ok := producer[key]; ok && v != "true" {
		log.Info("the replication producer keeps enable.gapless.guarantee on: without it a failed request lets later records of its partitions land first", "requested", v)
	}
	producer[key] = "true"
}
