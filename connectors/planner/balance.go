package planner

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/kmirror/kmirror/connectors/mirror"
)

// Params are the Balancer's rules (doc.go).
type Params struct {
	Enter, Exit float64       // a task turns hot above Enter×mean and cool again below Exit×mean
	Sustain     time.Duration // how long a task stays hot before it gives
	Cooldown    time.Duration // how long a task whose partitions changed is left alone
	MinGain     float64       // the fraction of the giver's load a move must take off at least
	MinMeanRate float64       // bytes/s per task below which nothing moves
	Smoothing   time.Duration // the time constant of the moving average each partition's rate is judged by
}

// DefaultParams are the rules kmirror runs with: more than 1.5× the mean for a sustained minute.
func DefaultParams() Params {
	return Params{Enter: 1.5, Exit: 1.25, Sustain: time.Minute, Cooldown: 30 * time.Second, MinGain: 0.1, MinMeanRate: 64 << 10,
		Smoothing: 30 * time.Second}
}

// Move is one hand-over between two tasks: Hot[i] goes From -> To and Cold[i] To -> From, so both keep their
// share. The loads are bytes/s, before the move and as projected after it.
type Move struct {
	From, To            int
	Hot, Cold           []mirror.TopicPartition
	Mean                float64
	FromLoad, ToLoad    float64
	FromAfter, ToAfter  float64
	HotFor              time.Duration // how long From had been hot
	HotRates, ColdRates []float64     // the rates of Hot and Cold
}

// Reason says why the move was made, for logs and the partitions endpoint.
func (m Move) Reason() string {
	return fmt.Sprintf("task %d carried %.1fx the mean load (%s of %s) for %s: %d hot partition(s) exchanged with "+
		"as many cold ones of task %d (%s), projected %s and %s",
		m.From, m.FromLoad/m.Mean, rate(m.FromLoad), rate(m.Mean), m.HotFor.Round(time.Second), len(m.Hot), m.To,
		rate(m.ToLoad), rate(m.FromAfter), rate(m.ToAfter))
}

func rate(bytesPerSecond float64) string {
	switch {
	case bytesPerSecond >= 1<<20:
		return fmt.Sprintf("%.1f MiB/s", bytesPerSecond/(1<<20))
	case bytesPerSecond >= 1<<10:
		return fmt.Sprintf("%.1f KiB/s", bytesPerSecond/(1<<10))
	}
	return fmt.Sprintf("%.0f B/s", bytesPerSecond)
}

// Balancer plans moves of partitions between a connector's tasks by their measured byte rates. It keeps, per
// task, the state of doc.go's state machine; it does no I/O and reads no clock. Not safe for concurrent use.
type Balancer struct {
	p        Params
	tasks    []taskState
	smoothed map[mirror.TopicPartition]float64 // each partition's moving average
	last     time.Time                         // the previous Step
}

type taskState struct {
	hotSince  time.Time // zero: cool
	coolUntil time.Time
	sig       uint64 // fingerprint of the task's partitions as last seen
}

// NewBalancer returns a Balancer with rules p.
func NewBalancer(p Params) *Balancer { return &Balancer{p: p} }

// Step judges the tasks of assigned (as dealt, task i at index i) with rates (bytes/s of the partitions whose
// task reported a fresh rate; a partition missing here leaves its task unmeasured) at time now, each partition
// by the moving average of the rates it was given (Smoothing), and returns
// the moves to make now. The caller applies them (Apply) and publishes the result; Step already counts the
// tasks involved as changed.
func (b *Balancer) Step(now time.Time, assigned [][]mirror.TopicPartition, rates map[mirror.TopicPartition]float64) []Move {
	rates = b.smooth(now, rates)
	n := len(assigned)
	fresh := len(b.tasks) != n
	if fresh {
		b.tasks = make([]taskState, n)
	}
	load := make([]float64, n)
	measured := make([]bool, n)
	var total float64
	for t, tps := range assigned {
		measured[t] = len(tps) > 0
		for _, tp := range tps {
			r, ok := rates[tp]
			measured[t] = measured[t] && ok
			load[t] += r
		}
		total += load[t]
		st := &b.tasks[t]
		if sig := fingerprint(tps); sig != st.sig {
			st.sig = sig
			if !fresh && !now.Before(st.coolUntil) {
				st.coolUntil, st.hotSince = now.Add(b.p.Cooldown), time.Time{}
			}
		}
	}
	if n < 2 {
		return nil
	}
	mean := total / float64(n)
	if mean < b.p.MinMeanRate {
		for t := range b.tasks {
			b.tasks[t].hotSince = time.Time{}
		}
		return nil
	}
	cooling := func(t int) bool { return now.Before(b.tasks[t].coolUntil) }
	var givers, receivers []int
	for t := range n {
		if cooling(t) {
			continue
		}
		st := &b.tasks[t]
		if !measured[t] {
			st.hotSince = time.Time{}
			continue
		}
		switch ratio := load[t] / mean; {
		case st.hotSince.IsZero() && ratio > b.p.Enter:
			st.hotSince = now
		case !st.hotSince.IsZero() && ratio < b.p.Exit:
			st.hotSince = time.Time{}
		}
		switch {
		case !st.hotSince.IsZero() && now.Sub(st.hotSince) >= b.p.Sustain:
			givers = append(givers, t)
		case st.hotSince.IsZero() && load[t] < mean:
			receivers = append(receivers, t)
		}
	}
	slices.SortStableFunc(givers, func(x, y int) int { return cmp.Compare(load[y], load[x]) })
	slices.SortStableFunc(receivers, func(x, y int) int { return cmp.Compare(load[x], load[y]) })

	var moves []Move
	used := make(map[int]bool)
	for _, h := range givers {
		for _, c := range receivers {
			if used[c] {
				continue
			}
			m, ok := b.exchange(assigned[h], assigned[c], rates, load[h], load[c])
			if !ok {
				continue
			}
			m.From, m.To, m.Mean, m.HotFor = h, c, mean, now.Sub(b.tasks[h].hotSince)
			moves = append(moves, m)
			used[h], used[c] = true, true
			b.tasks[h].coolUntil = now.Add(b.p.Cooldown)
			b.tasks[c].coolUntil = now.Add(b.p.Cooldown)
			if m.ToAfter > b.p.Enter*mean {
				b.tasks[c].hotSince = b.tasks[h].hotSince
			}
			break
		}
	}
	return moves
}

// exchange pairs the giver's hottest partitions with the receiver's coldest, one for one, keeping each pair
// that lowers the larger of the two loads; ok when the giver's load falls by MinGain at least.
func (b *Balancer) exchange(giver, receiver []mirror.TopicPartition, rates map[mirror.TopicPartition]float64, lh, lc float64) (Move, bool) {
	byRate := func(tps []mirror.TopicPartition, desc bool) []mirror.TopicPartition {
		out := slices.Clone(tps)
		slices.SortFunc(out, func(x, y mirror.TopicPartition) int {
			c := cmp.Compare(rates[x], rates[y])
			if desc {
				c = -c
			}
			return cmp.Or(c, cmp.Compare(x.Topic, y.Topic), cmp.Compare(x.Partition, y.Partition))
		})
		return out
	}
	hs, cs := byRate(giver, true), byRate(receiver, false)
	m := Move{FromLoad: lh, ToLoad: lc}
	j := 0
	for _, h := range hs {
		if j == len(cs) {
			break
		}
		d := rates[h] - rates[cs[j]]
		if rates[h] <= b.p.Enter*rates[cs[j]] {
			break // the giver's partitions only get colder, the receiver's only warmer
		}
		if max(lh-d, lc+d) < max(lh, lc) {
			lh, lc = lh-d, lc+d
			m.Hot, m.Cold = append(m.Hot, h), append(m.Cold, cs[j])
			m.HotRates, m.ColdRates = append(m.HotRates, rates[h]), append(m.ColdRates, rates[cs[j]])
			j++
		}
	}
	m.FromAfter, m.ToAfter = lh, lc
	return m, len(m.Hot) > 0 && max(lh, lc) <= (1-b.p.MinGain)*m.FromLoad
}

// smooth folds a sample of rates into each partition's exponential moving average, weighted by the time since
// the previous sample, and returns the averages of the partitions sampled now (the others are unmeasured).
func (b *Balancer) smooth(now time.Time, rates map[mirror.TopicPartition]float64) map[mirror.TopicPartition]float64 {
	alpha := 1.0
	if b.smoothed != nil && b.p.Smoothing > 0 && now.After(b.last) {
		alpha = 1 - math.Exp(-float64(now.Sub(b.last))/float64(b.p.Smoothing))
	}
	out := make(map[mirror.TopicPartition]float64, len(rates))
	for tp, r := range rates {
		if prev, ok := b.smoothed[tp]; ok {
			r = prev + alpha*(r-prev)
		}
		out[tp] = r
	}
	b.smoothed, b.last = out, now
	return out
}

// Apply returns order with the partitions of moves exchanged in place, so that Tasks deals each to its new task
// and every other partition keeps its position. order must be the list assigned was dealt from.
func Apply(order []mirror.TopicPartition, moves []Move) []mirror.TopicPartition {
	out := slices.Clone(order)
	pos := make(map[mirror.TopicPartition]int, len(out))
	for i, tp := range out {
		pos[tp] = i
	}
	for _, m := range moves {
		for i := range m.Hot {
			a, c := pos[m.Hot[i]], pos[m.Cold[i]]
			out[a], out[c] = out[c], out[a]
			pos[m.Hot[i]], pos[m.Cold[i]] = c, a
		}
	}
	return out
}

// fingerprint identifies a task's set of partitions, whatever their order: the XOR of each partition's FNV-1a
// hash.
func fingerprint(tps []mirror.TopicPartition) uint64 {
	const offset, prime = 14695981039346656037, 1099511628211
	var sig uint64
	for _, tp := range tps {
		h := uint64(offset)
		for i := 0; i < len(tp.Topic); i++ {
			h = (h ^ uint64(tp.Topic[i])) * prime
		}
		for shift := 0; shift < 32; shift += 8 {
			h = (h ^ uint64(byte(tp.Partition>>shift))) * prime
		}
		sig ^= h
	}
	return sig ^ uint64(len(tps))
}
