package forecast

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracecast/tracecast"
)

// offsetSteps is a flickering step function starting at t0, with reverts
// at one instant now and then (a change and its undoing at equal times).
func offsetSteps(seed uint64, r, n int, t0, dt float64) *Steps {
	rng := rand.New(rand.NewPCG(seed, 11))
	s := &Steps{}
	t, x := t0, r/2
	for i := 0; i < n; i++ {
		s.T, s.X, s.R = append(s.T, t), append(s.X, x), append(s.R, r)
		x = max(0, min(r, x+rng.IntN(5)-2))
		if rng.IntN(6) > 0 { // equal times now and then: Change sees both
			t += rng.ExpFloat64() * dt
		}
	}
	s.End = t + dt
	return s
}

// records runs an engine over s and returns every record it produced,
// printed (NaN intervals compare equal so), in order.
func records(t *testing.T, s *Steps, cfg Config, keepAll bool) ([]string, *Engine) {
	t.Helper()
	var out []string
	put := func(kind string, v any) { out = append(out, fmt.Sprintf("%s %+v", kind, v)) }
	e, err := New(cfg, Sink{Forecast: func(f tracecast.Forecast) { put("forecast", f) },
		Outcome: func(o tracecast.Outcome) { put("outcome", o) }, Episode: func(x tracecast.Episode) { put("episode", x) },
		Skill: func(k tracecast.Skill) { put("skill", k) }})
	if err != nil {
		t.Fatal(err)
	}
	e.keepAll = keepAll
	for i := range s.T {
		e.Change(s.T[i], s.X[i], s.R[i])
	}
	e.Finish(s.End)
	return out, e
}

// The history keeps only the change points a query can land on; every
// record is the same as with the whole history kept, bit for bit, for
// every method, with look-backs shorter than the run and as long as it,
// a regime test, and a run that does not start at 0 (its instants are
// not exact in binary).
func TestPrunedHistorySameRecords(t *testing.T) {
	q1, _ := ParseQuery("idle>=25%")
	q2, _ := ParseQuery("idle>=1")
	cases := []struct {
		name     string
		t0, dt   float64
		horizons []float64
		every    float64
	}{
		{"short look-back", 0.004406922, 2e-4, []float64{0.001, 0.01}, 0.0005},
		{"look-back spans the run", 1.25e-3, 1e-4, []float64{0.01, 0.1}, 0.003},
		{"every not a divisor", 3.7, 3e-4, []float64{0.0037, 0.029}, 0.00071},
		{"from zero", 0, 2e-4, []float64{0.002, 0.02}, 0.001},
	}
	seeds, n := uint64(2), 8000
	if raceEnabled {
		seeds, n = 1, 2000
	}
	for _, c := range cases {
		for seed := uint64(1); seed <= seeds; seed++ {
			s := offsetSteps(seed, 12, n, c.t0, c.dt)
			for _, m := range Methods {
				cfg := Config{Run: "r", Class: "idle", Queries: []Query{q1, q2}, Horizons: c.horizons, Every: c.every,
					Method: m, RegimeAlpha: 0.05, OpportunityThreshold: 0.5, SkillEvery: 0.05}
				want, full := records(t, s, cfg, true)
				got, pruned := records(t, s, cfg, false)
				if len(got) != len(want) {
					t.Fatalf("%s seed %d %s: %d records pruned, %d whole", c.name, seed, m, len(got), len(want))
				}
				for i := range want {
					if got[i] != want[i] {
						t.Fatalf("%s seed %d %s: record %d\npruned: %s\nwhole:  %s", c.name, seed, m, i, got[i], want[i])
					}
				}
				if kp, kf := kept(pruned), kept(full); kp >= kf {
					t.Errorf("%s seed %d %s: %d points kept pruned, %d whole: nothing pruned", c.name, seed, m, kp, kf)
				}
			}
		}
	}
}

// kept counts the change points an engine holds.
func kept(e *Engine) int {
	n := len(e.mean.hist) - e.mean.head
	for _, tr := range e.ind {
		n += len(tr.hist) - tr.head
	}
	return n
}

// With a look-back as long as the run (the default horizons reach 10% of
// it, and look 10 H back), the history follows the issue times, not the
// changes: ten times more changes over the same span keep about as many
// points.
func TestPrunedHistoryFollowsIssues(t *testing.T) {
	q, _ := ParseQuery("idle>=25%")
	cfg := Config{Run: "r", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.01, 0.1, 1}, Every: 0.01, RegimeAlpha: 0.01}
	most := func(n int) int {
		s := offsetSteps(5, 12, n, 0.004406922, 10.0/float64(n)) // 10 s
		e, err := New(cfg, Sink{Episode: func(tracecast.Episode) {}})
		if err != nil {
			t.Fatal(err)
		}
		peak := 0
		for i := range s.T {
			e.Change(s.T[i], s.X[i], s.R[i])
			if i%1000 == 0 {
				peak = max(peak, kept(e))
			}
		}
		return peak
	}
	small, large := most(100_000), most(1_000_000)
	if large > 2*small || large > 200_000 {
		t.Fatalf("kept %d points with 1e6 changes, %d with 1e5: memory grows with the changes", large, small)
	}
}

// Climatology is the mean over [start, t) however long the run: its window
// starts at t − (t − start), which rounds next to the start when the start
// is not 0, and used to fall before the kept history once the run was
// longer than the look-back, where the integral there was the history's
// first point's instead of 0 (climatology then drifted toward 0 as the run
// went on).
func TestClimatologyBeyondLookBack(t *testing.T) {
	s := offsetSteps(7, 12, 40_000, 0.004406922, 2e-4) // about 6.7 s
	q, _ := ParseQuery("idle>=25%")
	var fs []tracecast.Forecast
	e, err := New(Config{Run: "r", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.001, 0.01}, Every: 0.05,
		Method: Climatology}, Sink{Forecast: func(f tracecast.Forecast) { fs = append(fs, f) }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.T {
		e.Change(s.T[i], s.X[i], s.R[i])
	}
	e.Finish(s.End)
	late := 0
	for _, f := range fs {
		c := s.cumul(func(i int) float64 { return b2f(s.X[i] >= f.Threshold) })
		want := c.mean(s.T[0], f.IssuedAt)
		if f.IssuedAt == s.T[0] {
			continue
		}
		if math.Abs(f.P-want) > 1e-9 {
			t.Fatalf("climatology at %g (look-back %g): %g, the mean over [start, t) is %g", f.IssuedAt, e.keep, f.P, want)
		}
		if f.IssuedAt > s.T[0]+2*e.keep {
			late++
		}
	}
	if late < 50 {
		t.Fatalf("only %d forecasts beyond the look-back", late)
	}
}
