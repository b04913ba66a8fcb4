package backfill

import "math"

// calib moves the level of the quantile published as q10 so that the
// remaining time reaches q10 in 90% of the forecasts: adaptive conformal
// inference (Gibbs and Candès, 2021), α ← α + γ(0.1 − miss) after each
// outcome. The model's own q10 is right only where its strata have seen
// enough spells of the age asked: per trace it was outlasted from 79% to 97%
// of the time (docs/backfill.md). The level is a function of the trace up
// to the issue time, so forecasts stay causal and live equal offline.
//
// The outcomes fed back are those scored: every forecast of a spell,
// resolved when the spell ends (kept per worker, at most maxOpenQ a spell).
// Two levels: forecasts at a spell's start (one outcome a spell,
// independent enough for a large step: 1/√n after n outcomes, as a
// stochastic approximation of the quantile has it, down to 0.01, so that a
// run of a few dozen spells learns too) and those within a spell (one
// every --every, thousands in a long spell, all resolved at its end: a
// step of 0.001, else the level swings with each long spell). Measured on
// the ten traces of docs/backfill.md's spell table: one level per decade
// of elapsed time, or one update per spell and decade, left two and one
// traces outside 85–95%; these two levels with a step of 0.01 at the
// start one (stencil-16, 64 spells: 0.974); with 1/√n none.
type calib struct {
	alpha  [2]float64 // α_t at a spell's start [0] and within it [1], unbounded as ACI has it
	starts float64    // the outcomes fed back at a spell's start
}

const (
	calibTarget = 0.1
	// ACI's steps at a spell's start (the least: 1/√n's floor) and
	// within it.
	calibGammaStart, calibGammaWithin = 0.01, 0.001
	// calibStep quantizes the level the model is asked at, so that the
	// forecasts kept per stratum and age are computed again when it moved
	// by a step, not after every outcome (with 1/256 every few outcomes:
	// BenchmarkSpellForecasts 0.87 against 1.0 M changes/s).
	calibStep = 1.0 / 64
	// calibMax bounds the level asked (p2p-i-la-1's within-spell level
	// goes past 0.5: 0.855 with a bound of 0.5, 0.903 with 0.9; q50 is
	// then raised to q10, spellForecast.sort).
	calibMax = 0.9
	maxOpenQ = 1 << 15
)

func newCalib() *calib { return &calib{alpha: [2]float64{calibTarget, calibTarget}} }

func within(atStart bool) int {
	if atStart {
		return 0
	}
	return 1
}

// level is the quantile level the model is asked for q10: α_t rounded to
// calibStep, in [0, calibMax] (0: q10 = 0, outlasted always).
func (c *calib) level(atStart bool) float64 {
	return min(max(math.Round(c.alpha[within(atStart)]/calibStep)*calibStep, 0), calibMax)
}

// openQ is the forecasts of a worker's open spell whose outcome is not
// known yet: the one at its start (if any) and those within it, each by the
// time its q10 is reached (t + q10), and how many of those within are known
// to have reached it (the spell outlasted t + q10). A spell of 10 s with
// forecasts every 250 µs issues 40 000; the known ones are dropped when the
// list is full, so that maxOpenQ bounds it (8 bytes each); past that, a
// spell's later forecasts are not fed back.
type openQ struct {
	start    float64 // t + q10 of the forecast at the spell's start
	hasStart bool
	within   []float64
	hits     float64
}

// keep notes a forecast issued at t with q10 q.
func (o *openQ) keep(t, q float64, atStart bool) {
	if atStart {
		o.start, o.hasStart = t+q, true
		return
	}
	if len(o.within) == maxOpenQ {
		k := 0
		for _, due := range o.within {
			if due <= t {
				o.hits++
			} else {
				o.within[k] = due
				k++
			}
		}
		o.within = o.within[:k]
	}
	if len(o.within) < maxOpenQ {
		o.within = append(o.within, t+q)
	}
}

// resolve feeds back the outcomes of the forecasts of a spell that ended at
// end (the remaining time reached q10 or not) and empties o.
func (c *calib) resolve(o *openQ, end float64) {
	if o.hasStart {
		c.starts++
		c.alpha[0] += max(calibGammaStart, 1/math.Sqrt(c.starts)) * (calibTarget - missed(o.start, end))
	}
	// The step is linear: the outcomes of one spell sum in any order.
	n, miss := o.hits, 0.0
	for _, due := range o.within {
		n++
		miss += missed(due, end)
	}
	c.alpha[1] += calibGammaWithin * (calibTarget*n - miss)
	o.hasStart, o.within, o.hits = false, o.within[:0], 0
}

// missed is 1 when a spell that ended at end did not reach due.
func missed(due, end float64) float64 {
	if end >= due {
		return 0
	}
	return 1
}
