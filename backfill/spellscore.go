package backfill

import (
	"cmp"
	"maps"
	"math"
	"slices"
)

// SpellScore scores the spell forecasts of one length d against what
// happened (docs/backfill.md): the Brier score of p (P(the spell lasts at
// least d more)) against the outcome, the same for two baselines at the
// same issue times — residual (the run's spells completed before the issue
// time: P(L ≥ x + d | L ≥ x); before the first, (x + 1 µs)/(x + 1 µs + d),
// the forecaster's prior) and climatology (every spell of the run: a
// reference that sees the outcome) — the reliability of p, and how often
// the remaining time reached q10 (meant: 90%) and q50 (50%). It is computed
// from the spells and the records only, not from the forecaster.
type SpellScore struct {
	// State is the spells': idle, or busy (the busy spells' forecasts).
	State            string
	D                float64
	N                int
	Brier            float64
	BrierResidual    float64
	BrierClimatology float64
	SkillResidual    float64
	SkillClimatology float64
	CoverageQ10      float64
	CoverageQ50      float64
	Reliability      [10]ReliabilityBin
}

// ReliabilityBin is the forecasts whose p fell in one tenth of [0, 1].
type ReliabilityBin struct {
	N        int
	MeanP    float64
	Observed float64
}

// spellScorer keeps each open spell's forecasts until the spell ends (the
// outcome is then known) and scores them then, but for the climatology,
// which needs every spell of the run: for it, the outcomes are counted by
// length asked and elapsed time (to the nanosecond; issues come at a few
// elapsed times, multiples of --every), not kept one by one (56 bytes an
// issue: most of predict --spells' 591 MiB on ten times the 41 MB StarPU
// trace), and it is scored at the end from the spells' lengths.
type spellScorer struct {
	ds      []float64
	open    map[string][]issued
	byX     map[climKey]*climCount
	lengths lengthHist
	all     map[int64]float64 // spells by length in ns (climatology)
	score   []SpellScore
}

type climKey struct {
	di int
	ns int64 // elapsed time, ns
}

// climCount is the outcomes of the issues at one climKey.
type climCount struct{ n, hit float64 }

type issued struct {
	t, x, p, q10, q50 float64
	di                int
	res               float64 // residual baseline's p (NaN: no spell yet)
}

func newSpellScorer(ds []float64) *spellScorer {
	s := &spellScorer{ds: ds, open: map[string][]issued{}, byX: map[climKey]*climCount{}, all: map[int64]float64{}, score: make([]SpellScore, len(ds))}
	for i, d := range ds {
		s.score[i].D, s.score[i].State = d, "idle"
	}
	return s
}

func (s *spellScorer) issue(worker string, t, x float64, di int, p, q10, q50 float64) {
	s.open[worker] = append(s.open[worker], issued{t: t, x: x, p: p, q10: q10, q50: q50, di: di, res: s.lengths.residual(x, s.ds[di])})
}

// end closes a worker's spell at t (length L: learnt by the residual
// baseline after the outcomes it scores).
func (s *spellScorer) end(worker string, t, length float64) {
	for _, is := range s.open[worker] {
		s.scoreIssue(is, t-is.t)
	}
	s.open[worker] = s.open[worker][:0]
	if length > 0 {
		s.lengths.add(length)
		s.all[int64(math.Floor(length*1e9))]++
	}
}

// scoreIssue scores a forecast whose spell lasted r more.
func (s *spellScorer) scoreIssue(is issued, r float64) {
	sc := &s.score[is.di]
	d := s.ds[is.di]
	y := 0.0
	if r >= d {
		y = 1
	}
	sc.N++
	sc.Brier += (is.p - y) * (is.p - y)
	res := is.res
	if math.IsNaN(res) { // no spell completed yet: Gott's rule, the forecaster's own prior
		res = (is.x + 1e-6) / (is.x + 1e-6 + d)
	}
	sc.BrierResidual += (res - y) * (res - y)
	k := climKey{is.di, int64(math.Round(is.x * 1e9))}
	c := s.byX[k]
	if c == nil {
		c = &climCount{}
		s.byX[k] = c
	}
	c.n++
	c.hit += y
	if r >= is.q10 {
		sc.CoverageQ10++
	}
	if r >= is.q50 {
		sc.CoverageQ50++
	}
	b := &sc.Reliability[min(int(is.p*10), 9)]
	b.N++
	b.MeanP += is.p
	b.Observed += y
}

// finish computes the scores.
func (s *spellScorer) finish() []SpellScore {
	// P(L ≥ y) over every spell, to the nanosecond: the lengths counted
	// by their whole nanoseconds, in as many entries as the run has
	// distinct lengths, not one a spell (8 bytes each: 200 MB on the 2.1
	// GB StarPU trace). A histogram of 1000 bins a decade instead moved
	// the 1 ms climatology's Brier by 2%: lengths sit on the thresholds.
	lens := slices.Sorted(maps.Keys(s.all))
	above := make([]float64, len(lens)+1) // above[i]: spells of lens[i:]
	for i := len(lens) - 1; i >= 0; i-- {
		above[i] = above[i+1] + s.all[lens[i]]
	}
	tail := func(y float64) float64 {
		i, _ := slices.BinarySearch(lens, int64(math.Ceil(y*1e9)))
		return above[i]
	}
	// The climatology's squared errors, Σ (c − y)² over a key's issues:
	// n·c² − 2c·hits + hits (y is 0 or 1). In the keys' order: the sum is
	// the same from run to run.
	keys := make([]climKey, 0, len(s.byX))
	for k := range s.byX {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b climKey) int {
		if a.di != b.di {
			return a.di - b.di
		}
		return cmp.Compare(a.ns, b.ns)
	})
	for _, k := range keys {
		c, x, d := s.byX[k], float64(k.ns)/1e9, s.ds[k.di]
		clim := 0.5
		if n := tail(x); n > 0 {
			clim = tail(x+d) / n
		}
		s.score[k.di].BrierClimatology += c.n*clim*clim - 2*clim*c.hit + c.hit
	}
	for i := range s.score {
		sc := &s.score[i]
		if sc.N == 0 {
			continue
		}
		n := float64(sc.N)
		sc.Brier /= n
		sc.BrierResidual /= n
		sc.BrierClimatology /= n
		sc.CoverageQ10 /= n
		sc.CoverageQ50 /= n
		sc.SkillResidual = skill(sc.Brier, sc.BrierResidual)
		sc.SkillClimatology = skill(sc.Brier, sc.BrierClimatology)
		for j := range sc.Reliability {
			if b := &sc.Reliability[j]; b.N > 0 {
				b.MeanP /= float64(b.N)
				b.Observed /= float64(b.N)
			}
		}
	}
	return s.score
}

func skill(mse, ref float64) float64 {
	if ref == 0 {
		return math.NaN()
	}
	return 1 - mse/ref
}

// lengthHist counts spell lengths in fine logarithmic bins (100 per decade
// from 1 ns to 10⁵ s) in a Fenwick tree: the residual baseline's P(L ≥ x +
// d | L ≥ x) over the spells completed so far, in O(log n) per issue and
// per spell, within a bin's width (2.3%).
type lengthHist struct {
	tree [1402]float64
	n    float64
}

func lengthBin(l float64) int {
	if l < 1e-9 {
		return 0
	}
	return min(1+int(math.Floor((math.Log10(l)+9)*100)), 1400)
}

func (h *lengthHist) add(l float64) {
	h.n++
	for i := lengthBin(l) + 1; i <= len(h.tree)-1; i += i & -i {
		h.tree[i]++
	}
}

// below counts the lengths in bins below y's.
func (h *lengthHist) below(y float64) float64 {
	s := 0.0
	for i := lengthBin(y); i > 0; i -= i & -i {
		s += h.tree[i]
	}
	return s
}

func (h *lengthHist) residual(x, d float64) float64 {
	n := h.n - h.below(x)
	if n <= 0 {
		return math.NaN()
	}
	return (h.n - h.below(x+d)) / n
}
