package main

// The checkpoint tasks' "checkpoint round" log lines, and sampling kmirror, PostgreSQL and the brokers
// during the rounds.

import (
	"context"
	"fmt"
	"maps"
	"os"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// The text handler's line: time=... level=DEBUG msg="checkpoint round" ... task=<connector>-<n> ... groups=N took=D
var roundLine = regexp.MustCompile(`^time=(\S+) level=DEBUG msg="checkpoint round" .*\btask=(\S+).* groups=(\d+) took=(\S+)`)

func readRounds(logPath, connector string) ([]checkpointRound, error) {
	bs, err := os.ReadFile(logPath)
	if err != nil {
		return nil, err
	}
	var out []checkpointRound
	count := map[string]int{}
	for _, l := range strings.Split(string(bs), "\n") {
		m := roundLine.FindStringSubmatch(l)
		if m == nil || !strings.HasPrefix(strings.Trim(m[2], `"`), connector+"-") {
			continue
		}
		end, err1 := time.Parse(time.RFC3339Nano, m[1])
		took, err2 := time.ParseDuration(m[4])
		groups, _ := strconv.Atoi(m[3])
		if err1 != nil || err2 != nil {
			continue
		}
		task := strings.Trim(m[2], `"`)
		count[task]++
		out = append(out, checkpointRound{Task: task, N: count[task], TookS: took.Seconds(), Groups: groups, end: end})
	}
	return out, nil
}

// waitRounds waits until each of tasks tasks has logged at least n rounds.
func waitRounds(ctx context.Context, logPath, connector string, tasks, n int, deadline time.Time) ([]checkpointRound, error) {
	for {
		rounds, err := readRounds(logPath, connector)
		if err != nil {
			return nil, err
		}
		per := map[string]int{}
		for _, r := range rounds {
			per[r.Task] = max(per[r.Task], r.N)
		}
		done := len(per) >= tasks
		for _, c := range per {
			done = done && c >= n
		}
		if done {
			return rounds, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%d task(s) logged rounds %v; waited for %d rounds of %d tasks", len(per), per, n, tasks)
		}
		if err := sleepCtx(ctx, 200*time.Millisecond); err != nil {
			return nil, err
		}
	}
}

// classify names the rounds (first; steady: unchanged; change: the first that started after the re-commit;
// after: later ones) and sums them up per wave (the n-th round of every task).
func classify(rounds []checkpointRound, t0, moved time.Time, smp *ckSampler) ([]checkpointRound, []checkpointWave) {
	changeN := map[string]int{}
	for i := range rounds {
		r := &rounds[i]
		start := r.end.Add(-time.Duration(r.TookS * float64(time.Second)))
		r.StartS = start.Sub(t0).Seconds()
		switch {
		case r.N == 1:
			r.Kind = "first"
		case start.Before(moved):
			r.Kind = "steady"
		case changeN[r.Task] == 0 || changeN[r.Task] == r.N:
			changeN[r.Task] = r.N
			r.Kind = "change"
		default:
			r.Kind = "after"
		}
	}
	byN := map[int][]checkpointRound{}
	for _, r := range rounds {
		byN[r.N] = append(byN[r.N], r)
	}
	var waves []checkpointWave
	for _, n := range slices.Sorted(maps.Keys(byN)) {
		rs := byN[n]
		wv := checkpointWave{Kind: rs[0].Kind, Tasks: len(rs)}
		var first, last time.Time
		for _, r := range rs {
			start := r.end.Add(-time.Duration(r.TookS * float64(time.Second)))
			if first.IsZero() || start.Before(first) {
				first = start
			}
			if r.end.After(last) {
				last = r.end
			}
			wv.MaxTookS = max(wv.MaxTookS, r.TookS)
			if r.Kind != wv.Kind {
				wv.Kind = "mixed"
			}
		}
		wv.StartS, wv.SpanS = first.Sub(t0).Seconds(), last.Sub(first).Seconds()
		a, ok1 := smp.at(first)
		z, ok2 := smp.at(last)
		if ok1 && ok2 {
			wv.CPUS, wv.DBCPUS, wv.BrokerCPUS = z.CPU-a.CPU, z.DBCPU-a.DBCPU, z.BrokerCPU-a.BrokerCPU
		}
		waves = append(waves, wv)
	}
	sort.SliceStable(rounds, func(i, j int) bool { return rounds[i].StartS < rounds[j].StartS })
	return rounds, waves
}

type ckSampler struct {
	b       *bench
	pid     int
	t0      time.Time
	mu      sync.Mutex
	samples []sample
	at0     struct{ cpu, db, broker, busy, self float64 }
	done    chan struct{}
	stopped chan struct{}
	once    sync.Once
}

func newCkSampler(b *bench, pid int) *ckSampler {
	return &ckSampler{b: b, pid: pid, done: make(chan struct{}), stopped: make(chan struct{})}
}

func (s *ckSampler) brokerCPU() float64 {
	var t float64
	for _, n := range []string{"kafka-A", "kafka-B"} {
		c, _ := cpuSeconds(s.b.h.pid(n))
		t += c
	}
	return t
}

func (s *ckSampler) start() {
	s.at0.cpu, _ = cpuSeconds(s.pid)
	s.at0.db = treeCPUSeconds(s.b.h.pid("postgres"))
	s.at0.broker = s.brokerCPU()
	s.at0.busy = machineBusySeconds()
	s.at0.self, _ = cpuSeconds(os.Getpid())
	s.t0 = time.Now()
	go func() {
		defer close(s.stopped)
		tick := time.NewTicker(sampleEvery)
		defer tick.Stop()
		for {
			s.take()
			select {
			case <-s.done:
				return
			case <-tick.C:
			}
		}
	}()
}

func (s *ckSampler) take() {
	cpu, _ := cpuSeconds(s.pid)
	rss, _, _ := memKB(s.pid)
	sm := sample{T: time.Since(s.t0).Seconds(), CPU: cpu - s.at0.cpu, RSSKB: rss,
		DBCPU: treeCPUSeconds(s.b.h.pid("postgres")) - s.at0.db, BrokerCPU: s.brokerCPU() - s.at0.broker}
	self, _ := cpuSeconds(os.Getpid())
	sm.OtherCPU = max(0, machineBusySeconds()-s.at0.busy-sm.CPU-sm.DBCPU-sm.BrokerCPU-(self-s.at0.self))
	s.mu.Lock()
	s.samples = append(s.samples, sm)
	s.mu.Unlock()
}

func (s *ckSampler) stop() {
	s.once.Do(func() {
		close(s.done)
		<-s.stopped
	})
}

// at returns the sample nearest to t (linear interpolation between the two around it).
func (s *ckSampler) at(t time.Time) (sample, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.samples) == 0 {
		return sample{}, false
	}
	x := t.Sub(s.t0).Seconds()
	i := sort.Search(len(s.samples), func(i int) bool { return s.samples[i].T >= x })
	switch {
	case i == 0:
		return s.samples[0], true
	case i == len(s.samples):
		return s.samples[len(s.samples)-1], true
	}
	a, z := s.samples[i-1], s.samples[i]
	f := (x - a.T) / (z.T - a.T)
	lerp := func(p, q float64) float64 { return p + f*(q-p) }
	return sample{T: x, CPU: lerp(a.CPU, z.CPU), DBCPU: lerp(a.DBCPU, z.DBCPU), BrokerCPU: lerp(a.BrokerCPU, z.BrokerCPU),
		OtherCPU: lerp(a.OtherCPU, z.OtherCPU), RSSKB: max(a.RSSKB, z.RSSKB)}, true
}

func (s *ckSampler) peakRSSMB() float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var peak int64
	for _, sm := range s.samples {
		peak = max(peak, sm.RSSKB)
	}
	return float64(peak) / 1024
}
