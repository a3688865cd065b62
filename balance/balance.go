package balance

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"math"
	"slices"
	"time"
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

// Move is one hand-over between two bins: Hot[i] goes From -> To and Cold[i] To -> From, so both keep their
// count. The loads are bytes/s, before the move and as projected after it.
type Move[K comparable] struct {
	From, To            int
	Hot, Cold           []K
	Mean                float64
	FromLoad, ToLoad    float64
	FromAfter, ToAfter  float64
	HotFor              time.Duration // how long From had been hot
	HotRates, ColdRates []float64     // the rates of Hot and Cold
}

// Reason says why the move was made, for logs and the API; name renders a bin ("task 3", "worker w1").
func (m Move[K]) Reason(name func(bin int) string) string {
	return fmt.Sprintf("%s carried %.1fx the mean load (%s of %s) for %s: its %d hottest exchanged for the %d coldest "+
		"of %s (%s), projected %s and %s",
		name(m.From), m.FromLoad/m.Mean, Rate(m.FromLoad), Rate(m.Mean), m.HotFor.Round(time.Second), len(m.Hot), len(m.Cold),
		name(m.To), Rate(m.ToLoad), Rate(m.FromAfter), Rate(m.ToAfter))
}

// Rate renders bytes/s the way an operator reads it.
func Rate(bytesPerSecond float64) string {
	switch {
	case bytesPerSecond >= 1<<20:
		return fmt.Sprintf("%.1f MiB/s", bytesPerSecond/(1<<20))
	case bytesPerSecond >= 1<<10:
		return fmt.Sprintf("%.1f KiB/s", bytesPerSecond/(1<<10))
	}
	return fmt.Sprintf("%.0f B/s", bytesPerSecond)
}

// Balancer plans moves of items (partitions, tasks) between bins (tasks, workers) by their measured byte rates.
// It keeps, per bin, the state of doc.go's state machine; it does no I/O and reads no clock. Not safe for
// concurrent use.
type Balancer[K comparable] struct {
	p        Params
	cmp      func(a, b K) int // orders items of equal rate, for determinism
	class    func(K) string   // items are exchanged only within a class; nil: all are one
	seed     maphash.Seed
	tasks    []taskState
	smoothed map[K]float64 // each item's moving average
	last     time.Time     // the previous Step
}

type taskState struct {
	hotSince  time.Time // zero: cool
	coolUntil time.Time
	sig       uint64 // fingerprint of the task's partitions as last seen
}

// New returns a Balancer with rules p; cmp orders items of equal rate, and class, when not nil, restricts
// exchanges to items of the same class (the tasks of one connector, so that each keeps its spread).
func New[K comparable](p Params, cmp func(a, b K) int, class func(K) string) *Balancer[K] {
	return &Balancer[K]{p: p, cmp: cmp, class: class, seed: maphash.MakeSeed()}
}

// Params returns the rules the Balancer runs with.
func (b *Balancer[K]) Params() Params { return b.p }

// Step judges the tasks of assigned (as dealt, task i at index i) with rates (bytes/s of the partitions whose
// task reported a fresh rate; a partition missing here leaves its task unmeasured) at time now, each partition
// by the moving average of the rates it was given (Smoothing), and returns
// the moves to make now. The caller applies them (Apply) and publishes the result; Step already counts the
// tasks involved as changed.
func (b *Balancer[K]) Step(now time.Time, assigned [][]K, rates map[K]float64) []Move[K] {
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
		if sig := b.fingerprint(tps); sig != st.sig {
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

	var moves []Move[K]
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

// exchange pairs the giver's hottest items with the receiver's coldest of the same class, one for one, keeping
// each pair that lowers the larger of the two loads; ok when the giver's load falls by MinGain at least.
func (b *Balancer[K]) exchange(giver, receiver []K, rates map[K]float64, lh, lc float64) (Move[K], bool) {
	byRate := func(items []K, desc bool) []K {
		out := slices.Clone(items)
		slices.SortFunc(out, func(x, y K) int {
			c := cmp.Compare(rates[x], rates[y])
			if desc {
				c = -c
			}
			return cmp.Or(c, b.cmp(x, y))
		})
		return out
	}
	class := func(k K) string {
		if b.class == nil {
			return ""
		}
		return b.class(k)
	}
	cold := map[string][]K{} // by class, coldest first
	for _, c := range byRate(receiver, false) {
		cold[class(c)] = append(cold[class(c)], c)
	}
	m := Move[K]{FromLoad: lh, ToLoad: lc}
	for _, h := range byRate(giver, true) {
		cs := cold[class(h)]
		if len(cs) == 0 || rates[h] <= b.p.Enter*rates[cs[0]] {
			continue // nothing of its class to exchange it for, or nothing cold enough
		}
		d := rates[h] - rates[cs[0]]
		if max(lh-d, lc+d) < max(lh, lc) {
			lh, lc = lh-d, lc+d
			m.Hot, m.Cold = append(m.Hot, h), append(m.Cold, cs[0])
			m.HotRates, m.ColdRates = append(m.HotRates, rates[h]), append(m.ColdRates, rates[cs[0]])
			cold[class(h)] = cs[1:]
		}
	}
	m.FromAfter, m.ToAfter = lh, lc
	return m, len(m.Hot) > 0 && max(lh, lc) <= (1-b.p.MinGain)*m.FromLoad
}

// smooth folds a sample of rates into each partition's exponential moving average, weighted by the time since
// the previous sample, and returns the averages of the partitions sampled now (the others are unmeasured).
func (b *Balancer[K]) smooth(now time.Time, rates map[K]float64) map[K]float64 {
	alpha := 1.0
	if b.smoothed != nil && b.p.Smoothing > 0 && now.After(b.last) {
		alpha = 1 - math.Exp(-float64(now.Sub(b.last))/float64(b.p.Smoothing))
	}
	if b.smoothed == nil {
		b.smoothed = make(map[K]float64, len(rates))
	}
	for k := range b.smoothed {
		if _, ok := rates[k]; !ok {
			delete(b.smoothed, k)
		}
	}
	for k, r := range rates {
		if prev, ok := b.smoothed[k]; ok {
			r = prev + alpha*(r-prev)
		}
		b.smoothed[k] = r
	}
	b.last = now
	return b.smoothed
}

// fingerprint identifies a bin's set of items, whatever their order: the XOR of their hashes.
func (b *Balancer[K]) fingerprint(items []K) uint64 {
	var sig uint64
	for _, k := range items {
		sig ^= maphash.Comparable(b.seed, k)
	}
	return sig ^ uint64(len(items))
}
