package tasks

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// procCPU reads the process's user + system time from /proc/self/stat, a source independent of getrusage, in
// clock ticks (100 per second on Linux).
func procCPU(t *testing.T) time.Duration {
	b, err := os.ReadFile("/proc/self/stat")
	require.NoError(t, err)
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, err := strconv.ParseInt(fields[11], 10, 64) // field 14 of the line, 12 after the command
	require.NoError(t, err)
	stime, err := strconv.ParseInt(fields[12], 10, 64)
	require.NoError(t, err)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

func TestCPUMeterMeasuresTheProcess(t *testing.T) {
	m := newCPUMeter()
	start, wallStart := procCPU(t), time.Now()
	used, available := m.cores()
	require.Zero(t, used, "nothing measured before an interval has passed")
	require.Equal(t, runtime.GOMAXPROCS(0), available)

	// Spin a goroutine for a while, so that there is CPU time to measure (how much depends on the machine's load).
	deadline := time.Now().Add(cpuMeterMinInterval + 200*time.Millisecond)
	for time.Now().Before(deadline) {
	}
	used, _ = m.cores()
	want := float64(procCPU(t)-start) / float64(time.Since(wallStart))
	require.Positive(t, used)
	require.InDelta(t, want, used, 0.1, "the meter agrees with /proc/self/stat")

	again, _ := m.cores()
	require.Equal(t, used, again, "asked again within the interval, the meter answers its last reading")
}
