package source

import (
	"time"

	"github.com/kmirror/kmirror/kmtype"
)

// unsampledStat is what a run's final report says of a partition its committer never sampled: the run ended
// within a second of its pipeline's start, or before the pipeline started. Left out, the partition would have no
// row at all once its connector is STOPPED (the stop keeps only rows that exist), and a topic deleted while
// the connector is stopped would be judged on nothing. It reports where replication stands (the committed or
// acknowledged position) and the end offset last seen of the partition, if any; ok is false for a partition
// this run knows no position of (never committed, nothing read), which it has nothing to say about.
func (r *sourceRun) unsampledStat(p *sourcePartition, now time.Time) (stat kmtype.PartitionStat, ok bool) {
	pp := p.position()
	if pp.acked < 0 && pp.head < 0 && pp.readNext < 0 {
		return kmtype.PartitionStat{}, false
	}
	end := p.knownEnd(-1)
	if end <= 0 {
		end = -1
	}
	pos := pp.replicatedOffset(-1, end, r.resetPolicy == "latest")
	var headTS time.Time
	if pp.head >= 0 && pp.headTS != noTimestamp {
		headTS = time.UnixMilli(pp.headTS)
	}
	headTS = p.stats.seen.oldestUnreplicated(pos, end, headTS, now)
	stat = kmtype.PartitionStat{Topic: p.tp.Topic, Partition: p.tp.Partition, RemoteTopic: *p.remote, ReplicatedOffset: pos,
		Status: statusStop}
	setPosition(&stat, pos, end, headTS, pp.lastTS, now)
	return stat, true
}
