package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The machine's speed, measured beside every run. This VM's two cores were ~2.8× slower on some days than on
// others with nothing else running (a JSON parse of librdkafka statistics took 6.0 ms one day and 16.5–17.7 ms
// another), and every system's records/s and CPU per GB moved with them, so figures of different days compare
// only through a figure of the machine's own: a fixed piece of single-threaded CPU work, timed at the start and
// at the end of the bench. Its input and work never change (only the Go release, which the report names, could
// move it), so it is not any kmirror code: a change to kmirror must not look like a change of the machine.

// The report's environment keys of the calibration.
const (
	envCalibrationStart = "cpu_calibration_ms_start"
	envCalibrationEnd   = "cpu_calibration_ms_end"
)

const (
	calibrationTopics     = 100
	calibrationPartitions = 10
	calibrationRounds     = 7
)

// calibrationDoc is a statistics document of librdkafka's shape, for 100 topics of 10 partitions (~650 KB).
func calibrationDoc() []byte {
	var b strings.Builder
	b.WriteString(`{"name":"c#consumer-1","type":"consumer","ts":1,"msg_cnt":0,"msg_size":0,"tx_bytes":1,"rx_bytes":2,"topics":{`)
	for t := range calibrationTopics {
		if t > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"topic-%d":{"topic":"topic-%d","age":1000,"metadata_age":900,"partitions":{`, t, t)
		for p := range calibrationPartitions {
			if p > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `"%d":{"partition":%d,"broker":1,"leader":1,"desired":true,"unknown":false,"msgq_cnt":0,`+
				`"fetch_state":"active","query_offset":-1001,"next_offset":%d,"app_offset":%d,"committed_offset":-1001,`+
				`"lo_offset":0,"hi_offset":%d,"consumer_lag":%d,"rxmsgs":%d,"rxbytes":%d,"msgs_inflight":0}`,
				p, p, 10*t+p, 10*t+p, 12*t+p, 2*t, 10*t, 10240*t)
		}
		b.WriteString(`}}`)
	}
	b.WriteString(`}}`)
	return []byte(b.String())
}

// cpuCalibration returns the fastest of a few decodes of calibrationDoc into generic values, in milliseconds:
// the fastest, because a decode interrupted by another process says nothing about the machine's speed.
func cpuCalibration() float64 {
	doc := calibrationDoc()
	best := time.Duration(1<<63 - 1)
	for range calibrationRounds {
		start := time.Now()
		var v any
		if err := json.Unmarshal(doc, &v); err != nil {
			panic(fmt.Sprintf("calibration document: %v", err)) // a constant input: a bug here, not a condition
		}
		best = min(best, time.Since(start))
	}
	return float64(best) / float64(time.Millisecond)
}

// calibrationRange says how fast the machine was before the runs: "a–b ms" over the runs measured so, or
// "not measured".
func (b *bench) calibrationRange() string {
	var lo, hi float64
	for _, r := range b.results {
		if r.CalibrationMs <= 0 {
			continue
		}
		if lo == 0 || r.CalibrationMs < lo {
			lo = r.CalibrationMs
		}
		hi = max(hi, r.CalibrationMs)
	}
	if lo == 0 {
		return "not measured"
	}
	return fmt.Sprintf("%.2f–%.2f ms", lo, hi)
}

// calibrationMs formats a calibration for the report's environment.
func calibrationMs(ms float64) string {
	return fmt.Sprintf("%.2f", ms)
}
