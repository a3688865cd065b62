package main

import (
	"encoding/json"
	"testing"
)

// The calibration must time the same work on every machine and day: a document that decodes, with every
// partition in it.
func TestCalibrationDocumentIsFixedAndWhole(t *testing.T) {
	a, b := calibrationDoc(), calibrationDoc()
	if string(a) != string(b) {
		t.Fatal("two calibration documents differ")
	}
	var doc struct {
		Topics map[string]struct {
			Partitions map[string]struct {
				Partition int `json:"partition"`
			} `json:"partitions"`
		} `json:"topics"`
	}
	if err := json.Unmarshal(a, &doc); err != nil {
		t.Fatalf("decode the calibration document: %v", err)
	}
	n := 0
	for _, tp := range doc.Topics {
		n += len(tp.Partitions)
	}
	if len(doc.Topics) != calibrationTopics || n != calibrationTopics*calibrationPartitions {
		t.Fatalf("calibration document has %d topics and %d partitions, want %d and %d", len(doc.Topics), n,
			calibrationTopics, calibrationTopics*calibrationPartitions)
	}
	if d := cpuCalibration(); d <= 0 {
		t.Fatalf("calibration took %v", d)
	}
}
