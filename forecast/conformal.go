package forecast

import (
	"math"
	"slices"
)

// conformal turns a forecaster's recent errors into an interval: the last n
// known residuals y − p (split conformal on a sliding window, so the
// interval follows the errors as they drift), sorted for quantiles. The
// miscoverage level it asks of the quantiles adapts to the misses seen
// (adaptive conformal inference, Gibbs & Candès 2021): errors of
// overlapping horizons are correlated and drift with the run's phases, so
// a fixed level would cover too little; the adaptive level keeps the
// long-run share of outcomes inside near the coverage asked.
type conformal struct {
	n      int
	ring   []float64 // residuals in arrival order
	next   int
	sorted []float64
	// miss is the current miscoverage level, moved by gamma per outcome.
	miss, gamma float64
}

// aciGamma is the step of the adaptive level per known outcome.
const aciGamma = 0.02

// minResiduals is how many known outcomes an interval needs; before, it is
// [0, 1] (nothing is known yet).
const minResiduals = 20

func newConformal(n int, coverage float64) *conformal {
	return &conformal{n: n, miss: 1 - coverage, gamma: aciGamma}
}

// outcome moves the level after a forecast's outcome: inside or not.
func (c *conformal) outcome(inside bool, coverage float64) {
	if len(c.sorted) < minResiduals {
		return
	}
	m := 0.0
	if !inside {
		m = 1
	}
	c.miss += c.gamma * ((1 - coverage) - m)
}

func (c *conformal) add(r float64) {
	if len(c.ring) < c.n {
		c.ring = append(c.ring, r)
	} else {
		old := c.ring[c.next]
		c.ring[c.next] = r
		c.next = (c.next + 1) % c.n
		i, _ := slices.BinarySearch(c.sorted, old)
		c.sorted = slices.Delete(c.sorted, i, i+1)
	}
	i, _ := slices.BinarySearch(c.sorted, r)
	c.sorted = slices.Insert(c.sorted, i, r)
}

// interval is [p + q_lo, p + q_hi] clipped to [0, 1], the residual quantiles
// at miss/2 and 1 − miss/2, or the empty set (NaN, NaN) when the level
// asks for one with the finite-sample
// correction of split conformal prediction.
func (c *conformal) interval(p float64) (lo, hi float64) {
	n := len(c.sorted)
	if n < minResiduals || c.miss <= 0 {
		return 0, 1
	}
	if c.miss >= 1 {
		// More than coverage of the recent outcomes were forecast exactly:
		// ACI's answer is the empty set (no outcome inside), which keeps
		// the long-run coverage at the level asked instead of above it.
		return math.NaN(), math.NaN()
	}
	tail := c.miss / 2
	il := int(math.Floor(tail*float64(n+1))) - 1
	ih := int(math.Ceil((1-tail)*float64(n+1))) - 1
	ql, qh := math.Inf(-1), math.Inf(1)
	if il >= 0 {
		ql = c.sorted[il]
	}
	if ih < n {
		qh = c.sorted[ih]
	}
	// A hair of slack: outcomes are integrals computed in floating point,
	// here and by whoever checks them.
	// The interval holds p itself too: a consumer reads [lo, hi] as the
	// forecast's spread.
	return clamp01(math.Min(p, p+ql) - slack), clamp01(math.Max(p, p+qh) + slack)
}

// slack widens intervals by more than the rounding of an integral over a
// horizon and less than anything a scheduler could act on.
const slack = 1e-9

func clamp01(x float64) float64 { return math.Max(0, math.Min(1, x)) }

// mondrian is split conformal by category (Mondrian conformal prediction,
// Vovk et al. 2003): each forecast falls in a category known at its issue
// — how close its p is to 0 or 1, and whether the count is over the
// threshold at t —, and its interval comes from the errors and the
// adaptive level of its own category. Where the trace makes the outcome
// predictable (p near 0 or 1 and the state agreeing: an idle worker with
// nothing ready stays idle) the errors are small and the interval narrow;
// it is wide only in the categories whose errors are. A category with
// fewer than minResiduals errors uses the pooled ones.
type mondrian struct {
	all  *conformal
	cats [numCats]*conformal
}

// The categories: five bins of p times the state at t.
const (
	numPBins = 5
	numCats  = 2 * numPBins
)

// minCatResiduals is how many errors a category needs before its own
// intervals are used.
const minCatResiduals = 100

func newMondrian(n int, coverage float64) *mondrian {
	m := &mondrian{all: newConformal(n, coverage)}
	for i := range m.cats {
		m.cats[i] = newConformal(n, coverage)
	}
	return m
}

// category of a forecast p issued with the count over the threshold (z).
func category(p float64, z bool) uint8 {
	b := 0
	switch {
	case p < 0.02:
	case p < 0.2:
		b = 1
	case p < 0.8:
		b = 2
	case p < 0.98:
		b = 3
	default:
		b = 4
	}
	if z {
		b += numPBins
	}
	return uint8(b)
}

func (m *mondrian) pick(cat uint8) *conformal {
	if c := m.cats[cat]; len(c.sorted) >= minCatResiduals {
		return c
	}
	return m.all
}

func (m *mondrian) interval(p float64, cat uint8) (float64, float64) {
	return m.pick(cat).interval(p)
}

// outcome moves the level of the category's intervals (the pooled one's
// too, which stands in for the categories still short of errors).
func (m *mondrian) outcome(cat uint8, inside bool, coverage float64) {
	m.cats[cat].outcome(inside, coverage)
	m.all.outcome(inside, coverage)
}

func (m *mondrian) add(cat uint8, r float64) {
	m.cats[cat].add(r)
	m.all.add(r)
}
