package ks

import "fmt"

// Hist is the empirical distribution of an integer sample with values in
// 0..R, stored as a histogram of counts.
//
// For integer signals the ECDF is fully described by the counts, so a window
// of w samples costs O(R) memory instead of O(w), adding or removing a sample
// is O(1) and the two-sample statistic is an O(R) scan (see D). This is what
// lets the benchmarking phase evaluate every candidate window size in one pass
// over a trace.
//
// The zero value is an empty histogram over 0..0; use NewHist for other
// ranges. A Hist is not safe for concurrent mutation.
type Hist struct {
	counts []int64
	n      int64
}

// NewHist returns an empty histogram for values 0..R. It panics if R < 0.
func NewHist(R int) *Hist {
	if R < 0 {
		panic(fmt.Sprintf("ks: NewHist: negative value range R=%d", R))
	}
	return &Hist{counts: make([]int64, R+1)}
}

// HistOf returns a histogram over 0..R holding the given samples. It is a
// convenience for tests and small inputs; it panics on out-of-range values.
func HistOf(R int, samples ...int) *Hist {
	h := NewHist(R)
	for _, x := range samples {
		h.Add(x)
	}
	return h
}

// R returns the largest value the histogram can hold.
func (h *Hist) R() int {
	if len(h.counts) == 0 {
		return 0
	}
	return len(h.counts) - 1
}

// Add counts one sample with value x. It panics if x is outside 0..R: an
// out-of-range value means the signal and the histogram disagree on R, which
// is a programming error that would otherwise corrupt every later test.
func (h *Hist) Add(x int) {
	if h.counts == nil {
		h.counts = make([]int64, 1)
	}
	if uint(x) >= uint(len(h.counts)) {
		panic(fmt.Sprintf("ks: Hist.Add: value %d outside 0..%d", x, len(h.counts)-1))
	}
	h.counts[x]++
	h.n++
}

// AddN counts k samples with value x (k >= 0); it is how histograms are built
// from (value, count) pairs.
func (h *Hist) AddN(x int, k int) {
	if h.counts == nil {
		h.counts = make([]int64, 1)
	}
	if uint(x) >= uint(len(h.counts)) {
		panic(fmt.Sprintf("ks: Hist.AddN: value %d outside 0..%d", x, len(h.counts)-1))
	}
	if k < 0 {
		panic(fmt.Sprintf("ks: Hist.AddN: negative count %d", k))
	}
	h.counts[x] += int64(k)
	h.n += int64(k)
}

// Remove un-counts one sample with value x, so a window can slide. It panics
// if x is out of range or has no samples left (removing a sample that was
// never added means the caller's window bookkeeping is wrong).
func (h *Hist) Remove(x int) {
	if uint(x) >= uint(len(h.counts)) {
		panic(fmt.Sprintf("ks: Hist.Remove: value %d outside 0..%d", x, h.R()))
	}
	if h.counts[x] == 0 {
		panic(fmt.Sprintf("ks: Hist.Remove: value %d has no samples", x))
	}
	h.counts[x]--
	h.n--
}

// N returns the number of samples.
func (h *Hist) N() int { return int(h.n) }

// Count returns the number of samples equal to x (0 outside 0..R).
func (h *Hist) Count(x int) int {
	if uint(x) >= uint(len(h.counts)) {
		return 0
	}
	return int(h.counts[x])
}

// Reset empties the histogram, keeping its range and storage, so windows can
// be reused without allocating.
func (h *Hist) Reset() {
	clear(h.counts)
	h.n = 0
}

// CopyFrom makes h an exact copy of src, reusing h's storage when it is large
// enough.
func (h *Hist) CopyFrom(src *Hist) {
	if cap(h.counts) >= len(src.counts) {
		h.counts = h.counts[:len(src.counts)]
	} else {
		h.counts = make([]int64, len(src.counts))
	}
	copy(h.counts, src.counts)
	h.n = src.n
}

// D returns the exact two-sample Kolmogorov–Smirnov statistic of a and b as
// the fraction num/den, with den = n1·n2 and
//
//	num = max over x of |n2·C1(x) − n1·C2(x)|,
//
// where C1, C2 are the cumulative counts. Integer arithmetic makes D exact, so
// p-value code and decisions never depend on how a tool happened to round
// (R's cumsum of ±1/n gives 1e-16 instead of 0, SciPy gives 0.013249999999999984
// for 265/20000). The scan is O(R) and does not allocate. Histograms with
// different ranges are compared as if padded with zeros.
//
// If either sample is empty, D returns (0, 0). n1·n2 must fit in an int64.
func D(a, b *Hist) (num, den int64) {
	n1, n2 := a.n, b.n
	if n1 == 0 || n2 == 0 {
		return 0, 0
	}
	ca, cb := a.counts, b.counts
	var c1, c2, maxPos, maxNeg int64
	m := min(len(ca), len(cb))
	ca, cb = ca[:m:m], cb[:m:m]
	for i := range ca {
		c1 += ca[i]
		c2 += cb[i]
		diff := n2*c1 - n1*c2
		maxPos = max(maxPos, diff)
		maxNeg = min(maxNeg, diff)
	}
	// Beyond the shorter range one cumulative count is complete; the
	// difference moves monotonically towards 0 and cannot exceed what it was
	// at the last common value, except by reaching the end value 0. Nothing to
	// scan.
	return max(maxPos, -maxNeg), n1 * n2
}

// DFloat returns D(a, b) as a float64 (0 if either sample is empty).
func DFloat(a, b *Hist) float64 {
	num, den := D(a, b)
	if den == 0 {
		return 0
	}
	return float64(num) / float64(den)
}
