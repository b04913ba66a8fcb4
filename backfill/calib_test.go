package backfill

import (
	"math"
	"math/rand/v2"
	"testing"
)

// steadyRun is a run of r workers whose idle spells last 5 ms give or
// take 1%, and busy spells exponential (2 ms).
func steadyRun(rng *rand.Rand, r, n int) ([]event, float64) {
	evs, _, end := runWith(rng, r, n, func() float64 { return 0.005 * (1 + 0.01*rng.NormFloat64()) })
	return evs, end
}

// TestQ10Coverage: the remaining time reaches the published q10 in about
// 90% of the forecasts. Spells of one length fall in one bin of the
// model's histograms (26% wide, its mass spread over it): alone, the
// model's q10 is below the bin's middle and outlasted by every spell.
func TestQ10Coverage(t *testing.T) {
	for _, c := range []struct {
		name      string
		workers   int
		changes   int
		tolerance float64
	}{{"long", 4, 2000, 0.03}} {
		t.Run(c.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			evs, end := steadyRun(rng, c.workers, c.changes)
			cfg := Config{Run: "r", Mode: Wait, Alphas: []float64{10}, Policies: []string{Never}, SpellLengths: []float64{0.001}, KeepSpells: true}
			_, res := run(t, cfg, evs, end)
			for _, s := range res.SpellScores {
				t.Logf("%s: %d forecasts, R ≥ q10 %.3f, R ≥ q50 %.3f", s.State, s.N, s.CoverageQ10, s.CoverageQ50)
				if math.Abs(s.CoverageQ10-0.9) > c.tolerance {
					t.Errorf("%s spells: R ≥ q10 in %.3f of %d forecasts, want 0.90 ± %g", s.State, s.CoverageQ10, s.N, c.tolerance)
				}
			}
		})
	}
}

// TestOpenQBounded: a spell's open forecasts stay within maxOpenQ, the
// outcomes already known are counted, and resolve feeds back each one.
func TestOpenQBounded(t *testing.T) {
	var o openQ
	o.keep(0, 100, true)
	n := 3 * maxOpenQ
	for i := range n {
		// q10 1.05 ms: known to be reached 1.05 ms after issue.
		o.keep(1e-4*float64(i+1), 1.05e-3, false)
		if len(o.within) > maxOpenQ {
			t.Fatalf("%d open forecasts after %d", len(o.within), i+1)
		}
	}
	end := 1e-4 * float64(n) // the last 11 forecasts (issued within 1.05 ms of the end) missed
	c := newCalib()
	c.resolve(&o, end)
	want := calibTarget + calibGammaWithin*(calibTarget*float64(n)-11)
	if math.Abs(c.alpha[1]-want) > 1e-9 {
		t.Errorf("α within spells %g, want %g", c.alpha[1], want)
	}
	if want := calibTarget + 1*(calibTarget-1); math.Abs(c.alpha[0]-want) > 1e-12 {
		t.Errorf("α at spells' start %g, want %g (its q10 of 100 s missed, the first outcome: a step of 1)", c.alpha[0], want)
	}
	if len(o.within) != 0 || o.hits != 0 || o.hasStart {
		t.Errorf("not emptied: %+v", o)
	}
}

// TestStartLevelLearnsFast: the level of q10 at a spell's start moves by
// 1/√n after n outcomes (down to ACI's step): twenty spells whose start
// forecast each reached take it past 0.5, where a step of 0.01 would
// have moved it by 0.02 (stencil-16's 64 spells left it near 0.1).
func TestStartLevelLearnsFast(t *testing.T) {
	c := newCalib()
	for i := range 20 {
		var o openQ
		o.keep(float64(i), 0.001, true)
		c.resolve(&o, float64(i)+1)
	}
	if l := c.level(true); l < 0.5 {
		t.Errorf("level at a spell's start %g after 20 hits, want past 0.5", l)
	}
	if a := c.alpha[1]; a != calibTarget {
		t.Errorf("α within spells %g, want %g: no forecast within one was fed back", a, calibTarget)
	}
}
