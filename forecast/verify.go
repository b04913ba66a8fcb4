package forecast

import (
	"fmt"
	"math"
	"sort"

	"github.com/tracecast/tracecast"
)

// Steps is the step function X(s) of a run in continuous time: X = X[i] on
// [T[i], T[i+1]), R[i] containers counting; End is the last state end.
// Times are seconds.
type Steps struct {
	T   []float64
	X   []int
	R   []int
	End float64
	// Selected is how many containers the rules selected over the whole
	// trace (R is at least that with the counting from the start).
	Selected int
}

// Add appends a change (times non-decreasing; a change at the time of the
// previous one replaces it, one that changes nothing makes no step).
func (s *Steps) Add(t float64, x, r int) {
	n := len(s.T)
	if n > 0 && s.T[n-1] == t {
		s.X[n-1], s.R[n-1] = x, r
		if n > 1 && s.X[n-2] == x && s.R[n-2] == r {
			s.T, s.X, s.R = s.T[:n-1], s.X[:n-1], s.R[:n-1]
		}
		return
	}
	if n > 0 && s.X[n-1] == x && s.R[n-1] == r {
		return
	}
	s.T, s.X, s.R = append(s.T, t), append(s.X, x), append(s.R, r)
}

// integrals of [X ≥ k] and X/R from T[0] to T[i], computed once per k;
// run[i] is the first step of the run of equal values that holds step i.
type cumul struct {
	s   *Steps
	c   []float64
	run []int
	val func(i int) float64
}

func (s *Steps) cumul(val func(i int) float64) *cumul {
	c := &cumul{s: s, c: make([]float64, len(s.T)), run: make([]int, len(s.T)), val: val}
	for i := 1; i < len(s.T); i++ {
		c.c[i] = c.c[i-1] + val(i-1)*(s.T[i]-s.T[i-1])
		c.run[i] = i
		if val(i) == val(i-1) {
			c.run[i] = c.run[i-1]
		}
	}
	return c
}

// index is the step in force at t (the last with T ≤ t), −1 before T[0].
func (s *Steps) index(t float64) int {
	return sort.Search(len(s.T), func(i int) bool { return s.T[i] > t }) - 1
}

func (c *cumul) at(t float64) float64 {
	i := c.s.index(t)
	if i < 0 {
		return 0
	}
	return c.c[i] + c.val(i)*(t-c.s.T[i])
}

// mean over [a, b) (a clipped to T[0]); the value at b when empty. Over a
// run of equal values it is that value exactly: the difference of two
// running integrals carries their rounding, and an exact forecast or
// baseline must score exactly 0 (a skill against it is then undefined,
// not the ratio of two rounding errors).
func (c *cumul) mean(a, b float64) float64 {
	a = math.Max(a, c.s.T[0])
	if b <= a {
		if i := c.s.index(b); i >= 0 {
			return c.val(i)
		}
		return 0
	}
	i := c.s.index(a)
	if last := sort.Search(len(c.s.T), func(j int) bool { return c.s.T[j] >= b }) - 1; c.run[last] <= i {
		return c.val(i)
	}
	return (c.at(b) - c.at(a)) / (b - a)
}

// Score is the verification of one (query, horizon) group of forecasts.
type Score struct {
	Run     string
	Query   string
	Horizon float64
	Method  string
	// N is how many forecasts were scored (their interval ended by End).
	N int
	// MSE of p and of mean against what happened.
	MSEP, MSEMean float64
	// The baselines' MSE of p at the same issue times and thresholds.
	MSEPersistence, MSEClimatology, MSEKSPaper float64
	// Skill = 1 − MSE/MSE_baseline (NaN when the baseline is exact).
	SkillPersistence, SkillClimatology, SkillKSPaper float64
	// Coverage is the share of outcomes inside [lo, hi].
	Coverage float64
	// IntervalScore is the mean interval score of [lo, hi] (Gneiting and
	// Raftery 2007) at the level of Verify's coverage: the width, plus
	// 2/α times the distance by which the outcome falls outside (α = 1 −
	// coverage). Lower is better; it rewards narrow intervals that still
	// hold the outcome, where coverage alone rewards [0, 1].
	IntervalScore float64
	// Reliability bins p into 10 bins: per bin, count, mean p, mean outcome.
	Reliability [10]Bin
}

// Bin is one reliability bin: forecasts with p in [Lo, Lo+0.1).
type Bin struct {
	Lo, MeanP, MeanOutcome float64
	N                      int
}

// Verify scores forecasts against the step function of their run, from the
// definitions (docs/forecasts.md), independently of the Engine: outcomes and
// baselines are integrals of the whole step function. Forecasts whose
// interval ends after End are not scored. Groups come out sorted by query
// and horizon.
func Verify(s *Steps, fs []tracecast.Forecast) ([]Score, error) {
	return VerifyAt(s, fs, DefaultCoverage)
}

// DefaultCoverage is the coverage the intervals are meant to have unless
// told otherwise, and the level of Verify's interval score.
const DefaultCoverage = 0.9

// IntervalScore is the interval score of [lo, hi] at miscoverage alpha for
// the outcome y. An empty interval (NaN bounds) is scored as the point
// p: width 0, and 2/α times the distance to the outcome.
func IntervalScore(p, lo, hi, y, alpha float64) float64 {
	if math.IsNaN(lo) || math.IsNaN(hi) {
		lo, hi = p, p
	}
	is := hi - lo
	if y < lo {
		is += 2 / alpha * (lo - y)
	} else if y > hi {
		is += 2 / alpha * (y - hi)
	}
	return is
}

// VerifyAt is Verify with the interval score at the level coverage (one
// outside (0, 1): DefaultCoverage).
func VerifyAt(s *Steps, fs []tracecast.Forecast, coverage float64) ([]Score, error) {
	if !(coverage > 0 && coverage < 1) {
		coverage = DefaultCoverage
	}
	if len(s.T) == 0 {
		return nil, fmt.Errorf("no state in the run: nothing to verify against")
	}
	type key struct {
		q string
		h float64
	}
	ind := map[int]*cumul{}
	indicator := func(k int) *cumul {
		if c := ind[k]; c != nil {
			return c
		}
		c := s.cumul(func(i int) float64 { return b2f(s.X[i] >= k) })
		ind[k] = c
		return c
	}
	mean := s.cumul(func(i int) float64 { return frac(s.X[i], s.R[i]) })
	t0 := s.T[0]
	acc := map[key]*Score{}
	var keys []key
	sq := func(a, b float64) float64 { return (a - b) * (a - b) }
	inside := map[key]int{}
	for _, f := range fs {
		if f.IssuedAt < t0 || f.IssuedAt+f.Horizon > s.End {
			continue
		}
		k := key{f.Query, f.Horizon}
		sc := acc[k]
		if sc == nil {
			sc = &Score{Run: f.Run, Query: f.Query, Horizon: f.Horizon, Method: f.Method}
			acc[k] = sc
			keys = append(keys, k)
		}
		c := indicator(f.Threshold)
		t, h := f.IssuedAt, f.Horizon
		y := c.mean(t, t+h)
		ym := mean.mean(t, t+h)
		pers := b2f(s.X[max(s.index(t), 0)] >= f.Threshold)
		clim := c.mean(t0, t)
		ksp := c.mean(t-h, t)
		sc.N++
		sc.MSEP += sq(f.P, y)
		sc.MSEMean += sq(f.Mean, ym)
		sc.MSEPersistence += sq(pers, y)
		sc.MSEClimatology += sq(clim, y)
		sc.MSEKSPaper += sq(ksp, y)
		// Inside the interval as published: it already holds a slack for
		// the rounding of the integrals (conformal.go), and the outcome
		// records' inside, and so the rolling coverage, compare exactly.
		if y >= f.Lo && y <= f.Hi {
			inside[k]++
		}
		sc.IntervalScore += IntervalScore(f.P, f.Lo, f.Hi, y, 1-coverage)
		b := min(int(f.P*10), 9)
		bin := &sc.Reliability[b]
		bin.N++
		bin.MeanP += f.P
		bin.MeanOutcome += y
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].q != keys[j].q {
			return keys[i].q < keys[j].q
		}
		return keys[i].h < keys[j].h
	})
	out := make([]Score, 0, len(keys))
	for _, k := range keys {
		sc := acc[k]
		n := float64(sc.N)
		sc.MSEP /= n
		sc.MSEMean /= n
		sc.MSEPersistence /= n
		sc.MSEClimatology /= n
		sc.MSEKSPaper /= n
		sc.SkillPersistence = skill(sc.MSEP, sc.MSEPersistence)
		sc.SkillClimatology = skill(sc.MSEP, sc.MSEClimatology)
		sc.SkillKSPaper = skill(sc.MSEP, sc.MSEKSPaper)
		sc.Coverage = float64(inside[k]) / n
		sc.IntervalScore /= n
		for b := range sc.Reliability {
			bin := &sc.Reliability[b]
			bin.Lo = float64(b) / 10
			if bin.N > 0 {
				bin.MeanP /= float64(bin.N)
				bin.MeanOutcome /= float64(bin.N)
			} else {
				bin.MeanP, bin.MeanOutcome = math.NaN(), math.NaN()
			}
		}
		out = append(out, *sc)
	}
	return out, nil
}

func skill(mse, base float64) float64 {
	if base == 0 {
		return math.NaN()
	}
	return 1 - mse/base
}

// Same reports whether two forecasts are equal, an empty interval (NaN
// bounds) equal to an empty one.
func Same(a, b tracecast.Forecast) bool {
	nan := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	lo, hi := nan(a.Lo, b.Lo), nan(a.Hi, b.Hi)
	a.Lo, a.Hi, b.Lo, b.Hi = 0, 0, 0, 0
	return lo && hi && a == b
}

// Outcomes is what happened for each forecast: the fraction of its
// interval with at least Threshold containers in the class (NaN when the
// interval ends after End).
func Outcomes(s *Steps, fs []tracecast.Forecast) []float64 {
	ind := map[int]*cumul{}
	out := make([]float64, len(fs))
	for i, f := range fs {
		if len(s.T) == 0 || f.IssuedAt < s.T[0] || f.IssuedAt+f.Horizon > s.End {
			out[i] = math.NaN()
			continue
		}
		c := ind[f.Threshold]
		if c == nil {
			k := f.Threshold
			c = s.cumul(func(i int) float64 { return b2f(s.X[i] >= k) })
			ind[k] = c
		}
		out[i] = c.mean(f.IssuedAt, f.IssuedAt+f.Horizon)
	}
	return out
}
