package tasks

import (
	"runtime"
	"sync"
	"syscall"
	"time"
)

// cpuMeter measures the CPU the worker process uses, for capacity advice: tasks that lag on a worker whose
// cores are all busy want another worker, not other settings. Tasks ask every few seconds; the meter answers
// over the interval since its previous reading, renewed only once cpuMeterMinInterval has passed, so that the
// tasks of a worker share one reading and a burst of asks does not shrink the window to noise.
type cpuMeter struct {
	mu   sync.Mutex
	at   time.Time
	cpu  time.Duration // user + system time at `at`
	last float64       // cores used over the last interval
}

const cpuMeterMinInterval = time.Second

func newCPUMeter() *cpuMeter {
	m := &cpuMeter{}
	m.at, m.cpu, _ = processCPU()
	return m
}

// cores returns the cores the process used over the last interval (0 until one has passed) and the cores Go
// may use (GOMAXPROCS, which follows the CPU quota of a container).
func (m *cpuMeter) cores() (used float64, available int) {
	available = runtime.GOMAXPROCS(0)
	if m == nil {
		return 0, available
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now, cpu, ok := processCPU()
	if !ok {
		return m.last, available
	}
	if wall := now.Sub(m.at); wall >= cpuMeterMinInterval {
		m.last = max(0, float64(cpu-m.cpu)/float64(wall))
		m.at, m.cpu = now, cpu
	}
	return m.last, available
}

// processCPU reads the process's user and system time (getrusage: every thread, librdkafka's included).
func processCPU() (time.Time, time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return time.Now(), 0, false
	}
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return time.Now(), cpu, true
}
