package ks

import (
	"fmt"
	"math"
)

// SweepResult is the hit-rate of one candidate window size over a signal.
type SweepResult struct {
	// Window is the window size in samples.
	Window int
	// Samples is the number of signal samples (a trailing partial window
	// is not compared).
	Samples int
	// Compared is the number of consecutive window pairs tested (complete
	// windows minus one, or zero).
	Compared int
	// Hits is the number of pairs where H0 was not rejected.
	Hits int
	// HitRate is Hits/Compared, or 0 when nothing was compared: records
	// take Rate, which is nil then.
	HitRate float64
}

// Rate is the hit-rate as a record field: nil (null in JSON, an empty CSV
// field) when nothing was compared, where a rate is undefined — a 0 would
// read as "every comparison missed".
func (r SweepResult) Rate() *float64 {
	if r.Compared == 0 {
		return nil
	}
	h := r.HitRate
	return &h
}

// Sweep computes, for every window size in windows, the paper's prediction
// hit-rate of an integer signal with values in 0..R: the signal is cut into
// consecutive non-overlapping windows of w samples, window i−1 is compared
// with window i by the two-sample KS test (method m, level alpha; see Test),
// and a hit is a comparison that does not reject H0. A trailing partial
// window is not compared. Results are in the order of windows.
//
// All window sizes are evaluated in one pass over the signal: a running
// cumulative histogram is snapshotted at each window boundary, and a window's
// histogram is the difference of two snapshots. The per-sample cost is one
// counter increment whatever the number of window sizes; each window boundary
// costs O(R) plus one p-value (see Test for their cost per method).
//
// The decisions are exactly those of Test. The one shortcut: with SciPy and
// windows above 10000 samples, a comparison whose p-value comes from
// 2·smirnov(n, D) (SciPy's branch for p below about 0.025, which sums O(n)
// terms and costs milliseconds) is decided by Massart's bound
// 2·smirnov(n, D) <= 2·exp(−2nD²) whenever that bound alone is below alpha.
//
// Sweep panics if a window size is not positive or if a signal value lies
// outside 0..R (both are caller bugs; validate untrusted data first).
func Sweep(signal []int, R int, windows []int, m Method, alpha float64) []SweepResult {
	sw := NewSweeper(R, windows, m, alpha)
	sw.AddSlice(signal)
	return sw.Results()
}

// Sweeper is Sweep fed one sample at a time, so that a signal never has to
// be held in memory: memory is O(R × window sizes) whatever its length.
type Sweeper struct {
	R      int
	m      Method
	alpha  float64
	states []sweepState
	cum    []int64
	pos    int
	nb     int // the next boundary over all window sizes
}

type sweepState struct {
	w, next   int     // window size, position of the next boundary
	full      int     // complete windows so far
	snap      []int64 // cumulative counts at the previous boundary
	prev, cur *Hist
	res       SweepResult
}

// NewSweeper prepares a sweep; it panics on the same caller bugs as Sweep.
func NewSweeper(R int, windows []int, m Method, alpha float64) *Sweeper {
	if R < 0 {
		panic(fmt.Sprintf("ks: Sweep: negative value range R=%d", R))
	}
	if !m.valid() {
		panic(fmt.Sprintf("ks: Sweep: unknown method %q", string(m)))
	}
	sw := &Sweeper{R: R, m: m, alpha: alpha, cum: make([]int64, R+1), nb: math.MaxInt, states: make([]sweepState, 0, len(windows))}
	for _, w := range windows {
		if w <= 0 {
			panic(fmt.Sprintf("ks: Sweep: window size %d is not positive", w))
		}
		// snap, prev and cur are made at the size's first boundary:
		// a size longer than the signal costs no counters.
		sw.states = append(sw.states, sweepState{w: w, next: w, res: SweepResult{Window: w}})
		sw.nb = min(sw.nb, w)
	}
	return sw
}

// Add takes the next sample: one counter increment, plus O(R) and one
// p-value at each window boundary.
func (sw *Sweeper) Add(v int) {
	if uint(v) > uint(sw.R) {
		panic(fmt.Sprintf("ks: Sweep: signal value %d outside 0..%d", v, sw.R))
	}
	sw.cum[v]++
	sw.pos++
	if sw.pos < sw.nb {
		return
	}
	sw.nb = math.MaxInt
	for i := range sw.states {
		s := &sw.states[i]
		if s.next == sw.pos {
			if s.snap == nil { // the first boundary: snap was all zeros
				s.snap, s.prev, s.cur = make([]int64, sw.R+1), NewHist(sw.R), NewHist(sw.R)
			}
			// cur = cum - snap; snap = cum.
			for v := range sw.cum {
				s.cur.counts[v] = sw.cum[v] - s.snap[v]
			}
			s.cur.n = int64(s.w)
			copy(s.snap, sw.cum)
			s.full++
			if s.full >= 2 {
				s.res.Compared++
				if !sweepReject(s.prev, s.cur, sw.m, sw.alpha) {
					s.res.Hits++
				}
			}
			s.prev, s.cur = s.cur, s.prev
			if s.next > math.MaxInt-s.w {
				s.next = math.MaxInt // no boundary past MaxInt samples
			} else {
				s.next += s.w
			}
		}
		sw.nb = min(sw.nb, s.next)
	}
}

// AddSlice adds samples in bulk: the stretch up to the next window boundary
// is a tight counting loop.
func (sw *Sweeper) AddSlice(vs []int) {
	for len(vs) > 0 {
		n := min(len(vs), sw.nb-sw.pos-1)
		for _, v := range vs[:n] {
			if uint(v) > uint(sw.R) {
				panic(fmt.Sprintf("ks: Sweep: signal value %d outside 0..%d", v, sw.R))
			}
			sw.cum[v]++
		}
		sw.pos += n
		vs = vs[n:]
		if len(vs) > 0 {
			sw.Add(vs[0]) // reaches the boundary
			vs = vs[1:]
		}
	}
}

// Results returns the hit rates of the samples added so far.
func (sw *Sweeper) Results() []SweepResult {
	out := make([]SweepResult, len(sw.states))
	for i := range sw.states {
		r := sw.states[i].res
		r.Samples = sw.pos
		if r.Compared > 0 {
			r.HitRate = float64(r.Hits) / float64(r.Compared)
		}
		out[i] = r
	}
	return out
}

// sweepReject is Test(a, b, m, alpha).Reject, computed without the p-value
// when a bound settles the decision (see Sweep).
func sweepReject(a, b *Hist, m Method, alpha float64) bool {
	if !(alpha > 0 && alpha <= 1) {
		alpha = DefaultAlpha
	}
	if m == SciPy && a.n > 0 && b.n > 0 && max(a.n, b.n) > sciPyMaxAutoN {
		n1, n2 := float64(max(a.n, b.n)), float64(min(a.n, b.n))
		n := math.RoundToEven(n1 * n2 / (n1 + n2))
		x := sciPyD(a, b)
		t := n * x
		nx2 := t * x
		// The conditions under which kolmognSF returns 2·smirnov(n, x).
		if n > 140 && x > 0.5/n && x < 1 && t > 1 && t < n-1 && (x >= 0.5 || nx2 >= 2.2) {
			if bound := 2 * math.Exp(-2*nx2); bound*(1+1e-9) < alpha {
				return true
			}
		}
	}
	return Test(a, b, m, alpha).Reject
}
