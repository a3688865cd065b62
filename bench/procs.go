package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat (100 on every Linux we run on).
const clockTicks = 100

// cpuSeconds returns utime+stime of pid (all its threads) in seconds.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name (field 2) may contain spaces: fields after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime is field 14, stime field 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("unexpected /proc/%d/stat", pid)
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) / clockTicks, nil
}

// ppid returns the parent PID of pid.
func ppid(pid int) int {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// treeCPUSeconds is the CPU time of pid and its direct children (PostgreSQL: the postmaster and its backends).
// Exited children are not counted, so only deltas over a window are meaningful.
func treeCPUSeconds(pid int) float64 {
	total, _ := cpuSeconds(pid)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return total
	}
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil || n == pid {
			continue
		}
		if ppid(n) == pid {
			c, _ := cpuSeconds(n)
			total += c
		}
	}
	return total
}

// memKB returns VmRSS and VmHWM (peak RSS) of pid in KiB.
func memKB(pid int) (rss, hwm int64, err error) {
	kb, err := kbFields(fmt.Sprintf("/proc/%d/status", pid), "VmRSS", "VmHWM")
	return kb["VmRSS"], kb["VmHWM"], err
}

// kbFields reads the "Key: N kB" lines of keys from a /proc file such as /proc/meminfo or /proc/PID/status; a
// key that is missing or not a number is absent from the result.
func kbFields(path string, keys ...string) (map[string]int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make(map[string]int64, len(keys))
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok || !slices.Contains(keys, k) {
			continue
		}
		if n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64); err == nil {
			out[k] = n
		}
	}
	return out, sc.Err()
}

// alive tells whether pid runs (and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i >= 0 && i+2 < len(b) && b[i+2] != 'Z'
}

// child is a process this program started; it is stopped by its PID only.
type child struct {
	cmd  *exec.Cmd
	done chan struct{}
	err  error
	log  *os.File
}

// startChild starts name args with stdout and stderr going to logPath, in a process group of its own (so that
// a Ctrl-C of the bench reaches it only through stop).
func startChild(logPath string, env []string, name string, args ...string) (*child, error) {
	lf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.Env = append(os.Environ(), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	c := &child{cmd: cmd, done: make(chan struct{}), log: lf}
	go func() {
		c.err = cmd.Wait()
		lf.Close()
		close(c.done)
	}()
	return c, nil
}

func (c *child) pid() int { return c.cmd.Process.Pid }

func (c *child) exited() bool {
	select {
	case <-c.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM, waits up to grace, then SIGKILL.
func (c *child) stop(grace time.Duration) error {
	if c.exited() {
		return c.err
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return nil
	case <-time.After(grace):
	}
	_ = c.cmd.Process.Kill()
	<-c.done
	return fmt.Errorf("pid %d did not stop within %s; killed", c.pid(), grace)
}

// machineBusySeconds is the CPU time all cores spent outside idle and iowait since boot (/proc/stat).
func machineBusySeconds() float64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		return 0
	}
	var busy float64
	for i, v := range f[1:9] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		n, _ := strconv.ParseFloat(v, 64)
		busy += n
	}
	return busy / clockTicks
}

// threadCPU returns the CPU seconds of pid's live threads, summed by thread name (librdkafka names its threads
// rdk:main, rdk:brokerN, ...; Go's threads carry the program's name).
func threadCPU(pid int) map[string]float64 {
	out := map[string]float64{}
	ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	if err != nil {
		return out
	}
	for _, e := range ents {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/stat", pid, e.Name()))
		if err != nil {
			continue
		}
		i, j := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
		if i < 0 || j < i {
			continue
		}
		name := string(b[i+1 : j])
		f := strings.Fields(string(b[j+1:]))
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseFloat(f[11], 64)
		st, _ := strconv.ParseFloat(f[12], 64)
		out[name] += (u + st) / clockTicks
	}
	return out
}
