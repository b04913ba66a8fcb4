package forecast

import "math"

// track is a piecewise-constant function v(s) of trace time (seconds) with
// the history of its integral over a bounded look-back: enough to average v
// over any [a, b) with a ≥ now − keep, and over [start, now) (climatology)
// from the running integral.
//
// With needed set, the history keeps only the change points some later
// query can land on: the Engine asks at instants it knows in advance (the
// issue times minus the look-backs, the regime windows' starts, the
// start), so a change point in force over no such instant is dropped once
// the next one is final. Memory then follows the number of those instants
// within the look-back, not the number of changes (millions on a long
// StarPU run, where the look-back of 10 H can span the whole run).
type track struct {
	keep  float64
	start float64
	hist  []point // change points, oldest first; hist[head:] are live
	head  int
	// switches counts the changes of v (for the Markov method's rate).
	switches int
	// needed reports whether a query may land in [lo, hi) (nil: keep
	// every point).
	needed func(start, lo, hi float64) bool
	// early are the points near the start (nearStart) once pruned from
	// hist: climatology's window starts at t − (t − start), the start give
	// or take a rounding, however long the run.
	early     []point
	earlyDone bool
}

// nearStart reports whether s is the start give or take a rounding of
// t − (t − start): far more than that, for runs of years.
func (tr *track) nearStart(s float64) bool {
	return s <= tr.start+1e-6*(math.Abs(tr.start)+1)
}

type point struct {
	t   float64
	cum float64 // ∫ v from start to t
	v   float64 // value from t on
	n   int     // switches up to t
}

func newTrack(start, v, keep float64) *track {
	return &track{keep: keep, start: start, hist: []point{{t: start, v: v}}}
}

// value is v at the last change (the current value).
func (tr *track) value() float64 { return tr.hist[len(tr.hist)-1].v }

// set changes v to x at time t (t not before the last change).
func (tr *track) set(t, x float64) {
	last := tr.hist[len(tr.hist)-1]
	if x == last.v {
		return
	}
	tr.switches++
	if t == last.t { // several changes at one instant: the last one holds
		tr.hist[len(tr.hist)-1].v = x
		if len(tr.hist)-1 > tr.head && tr.hist[len(tr.hist)-2].v == x {
			tr.hist = tr.hist[:len(tr.hist)-1]
		}
		return
	}
	// The point before last is final now (the last one is: t is later):
	// nothing will replace or merge it. Drop it unless a query can land
	// while it is in force. The last one stays, for changes at t that
	// revert this one.
	if n := len(tr.hist); tr.needed != nil && n-2 > tr.head && !tr.needed(tr.start, tr.hist[n-2].t, last.t) {
		tr.hist[n-2] = last
		tr.hist = tr.hist[:n-1]
	}
	tr.hist = append(tr.hist, point{t: t, cum: last.cum + last.v*(t-last.t), v: x, n: tr.switches})
	tr.prune(t)
}

// prune forgets the change points no look-back can reach, keeping the last
// one at or before now − keep; the slice is compacted once half of it is dead.
func (tr *track) prune(now float64) {
	limit := now - tr.keep
	for tr.head+1 < len(tr.hist) && tr.hist[tr.head+1].t <= limit {
		if !tr.earlyDone { // final: it is not the last point
			if p := tr.hist[tr.head]; tr.nearStart(p.t) {
				tr.early = append(tr.early, p)
			} else {
				tr.earlyDone = true
			}
		}
		tr.head++
	}
	if tr.head > 1024 && tr.head > len(tr.hist)/2 {
		n := copy(tr.hist, tr.hist[tr.head:])
		tr.hist = tr.hist[:n]
		tr.head = 0
	}
}

// at returns the change point in force at s (the last with t ≤ s), s within
// the look-back or near the start.
func (tr *track) at(s float64) point {
	h := tr.hist[tr.head:]
	if s < h[0].t && len(tr.early) > 0 {
		h = tr.early
	}
	// The look-backs are short relative to the history: search from the end.
	lo, hi := 0, len(h) // invariant: h[lo].t ≤ s (or lo = 0), h[hi].t > s
	for hi-lo > 1 {
		m := int(uint(lo+hi) >> 1)
		if h[m].t <= s {
			lo = m
		} else {
			hi = m
		}
	}
	return h[lo]
}

// cum is ∫ v from start to s (s clamped to the kept history).
func (tr *track) cum(s float64) float64 {
	if s <= tr.start {
		return 0
	}
	p := tr.at(s)
	if s < p.t { // before the kept history: cannot happen within keep
		return p.cum
	}
	return p.cum + p.v*(s-p.t)
}

// avg is the mean of v over [t − l, t) clipped to the track's start; at the
// start itself (an empty interval) the current value.
func (tr *track) avg(t, l float64) float64 {
	a := max(t-l, tr.start)
	if t <= a {
		return tr.at(t).v
	}
	return tr.mean(a, t)
}

// mean is the mean of v over [a, b), a < b: exactly v when v did not
// change in between (the difference of two running integrals carries their
// rounding, and an exact forecast or baseline must score exactly 0).
func (tr *track) mean(a, b float64) float64 {
	if pa := tr.at(a); tr.at(b).n == pa.n { // the same change point
		return pa.v
	}
	return (tr.cum(b) - tr.cum(a)) / (b - a)
}

// clim is the mean of v over [start, t).
func (tr *track) clim(t float64) float64 { return tr.avg(t, t-tr.start) }

// switchesIn counts the changes of v in (t − l, t].
func (tr *track) switchesIn(t, l float64) int {
	return tr.at(t).n - tr.at(max(t-l, tr.start)).n
}
