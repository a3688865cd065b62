package main

import (
	"reflect"
	"testing"

	"github.com/kmirror/kmirror/connectors/kafka/kafkabench"
)

func TestAuditSequencesCountsMissingDuplicatedReordered(t *testing.T) {
	tp := kafkabench.TP{Topic: "t", Partition: 0}
	written := map[kafkabench.TP]int64{tp: 6}
	// 2 read twice (a duplicate), 4 before 3 (3 reordered), 5 never read (missing).
	read := map[kafkabench.TP][]int64{tp: {0, 1, 2, 2, 4, 3}}
	got := auditSequences(written, read)
	want := auditResult{Written: 6, Read: 6, Missing: 1, Duplicated: 1, Reordered: 1}
	if got.DuplicatedIn["t-0"] != 1 {
		t.Fatalf("duplicates by partition = %v, want t-0: 1", got.DuplicatedIn)
	}
	got.DuplicatedIn = nil
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("audit = %+v, want %+v", got, want)
	}
}

func TestAuditSequencesCleanCopy(t *testing.T) {
	tp := kafkabench.TP{Topic: "t", Partition: 3}
	got := auditSequences(map[kafkabench.TP]int64{tp: 3}, map[kafkabench.TP][]int64{tp: {0, 1, 2}})
	if got.Missing+got.Duplicated+got.Reordered != 0 || got.Read != 3 {
		t.Fatalf("a clean copy audits as %+v", got)
	}
}

func TestWeightedPartitionsGivesTheHotShare(t *testing.T) {
	var hot, cold []kafkabench.TP
	for p := range 8 {
		hot = append(hot, kafkabench.TP{Topic: "hot", Partition: int32(p)})
	}
	for p := range 392 {
		cold = append(cold, kafkabench.TP{Topic: "cold", Partition: int32(p)})
	}
	list := weightedPartitions(hot, cold, 0.8)
	n := 0
	for _, tp := range list {
		if tp.Topic == "hot" {
			n++
		}
	}
	if share := float64(n) / float64(len(list)); share < 0.79 || share > 0.81 {
		t.Fatalf("hot share of the list = %.3f, want 0.8", share)
	}
}
