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
	// HitRate is Hits/Compared, or 0 when nothing was compared.
	HitRate float64
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
	if R < 0 {
		panic(fmt.Sprintf("ks: Sweep: negative value range R=%d", R))
	}
	if !m.valid() {
		panic(fmt.Sprintf("ks: Sweep: unknown method %q", string(m)))
	}
	type state struct {
		w, next   int     // window size, position of the next boundary
		full      int     // complete windows so far
		snap      []int64 // cumulative counts at the previous boundary
		prev, cur *Hist
		res       SweepResult
	}
	states := make([]state, len(windows))
	for i, w := range windows {
		if w <= 0 {
			panic(fmt.Sprintf("ks: Sweep: window size %d is not positive", w))
		}
		states[i] = state{
			w: w, next: w,
			snap: make([]int64, R+1),
			prev: NewHist(R), cur: NewHist(R),
			res: SweepResult{Window: w},
		}
	}
	if len(states) == 0 {
		return []SweepResult{}
	}
	cum := make([]int64, R+1)
	pos := 0
	n := len(signal)
	for {
		// The next boundary over all window sizes.
		nb := math.MaxInt
		for i := range states {
			nb = min(nb, states[i].next)
		}
		if nb > n {
			nb = n
		}
		for _, v := range signal[pos:nb] {
			if uint(v) > uint(R) {
				panic(fmt.Sprintf("ks: Sweep: signal value %d outside 0..%d", v, R))
			}
			cum[v]++
		}
		pos = nb
		for i := range states {
			s := &states[i]
			if s.next != pos {
				continue
			}
			// cur = cum - snap; snap = cum.
			for v := range cum {
				s.cur.counts[v] = cum[v] - s.snap[v]
			}
			s.cur.n = int64(s.w)
			copy(s.snap, cum)
			s.full++
			if s.full >= 2 {
				s.res.Compared++
				if !sweepReject(s.prev, s.cur, m, alpha) {
					s.res.Hits++
				}
			}
			s.prev, s.cur = s.cur, s.prev
			s.next += s.w
		}
		if pos == n {
			break
		}
	}
	out := make([]SweepResult, len(states))
	for i := range states {
		s := &states[i]
		s.res.Samples = len(signal)
		if s.res.Compared > 0 {
			s.res.HitRate = float64(s.res.Hits) / float64(s.res.Compared)
		}
		out[i] = s.res
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
