package forecast

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracecast/tracecast"
)

// randomSteps is a flickering step function: R containers, changes at
// random times (some at equal times), like a task-based run.
func randomSteps(seed uint64, r, n int) *Steps {
	rng := rand.New(rand.NewPCG(seed, 7))
	s := &Steps{}
	t, x := 0.0, r
	for i := 0; i < n; i++ {
		s.Add(t, x, r)
		x = max(0, min(r, x+rng.IntN(5)-2))
		if rng.IntN(8) > 0 { // equal times now and then
			t += rng.ExpFloat64() * 0.002 * float64(1+i/(n/4))
		}
	}
	s.End = t + 0.01
	return s
}

func run(t *testing.T, s *Steps, m Method, cut int, end float64) ([]tracecast.Forecast, []tracecast.Outcome) {
	t.Helper()
	var fs []tracecast.Forecast
	var os []tracecast.Outcome
	q1, _ := ParseQuery("idle>=25%")
	q2, _ := ParseQuery("idle>=1")
	e, err := New(Config{Run: "r", Class: "idle", Queries: []Query{q1, q2}, Horizons: []float64{0.001, 0.01, 0.1},
		Every: 0.005, Method: m}, Sink{Forecast: func(f tracecast.Forecast) { fs = append(fs, f) },
		Outcome: func(o tracecast.Outcome) { os = append(os, o) }})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < cut; i++ {
		e.Change(s.T[i], s.X[i], s.R[i])
	}
	e.Finish(end)
	return fs, os
}

// The baselines are the definitions: the Engine's persistence, climatology
// and ks-paper forecasts, and every outcome, equal the brute-force integrals
// of Verify's independent code.
func TestBaselinesMatchDefinitions(t *testing.T) {
	s := randomSteps(1, 12, 4000)
	for _, m := range []Method{Persistence, Climatology, KSPaper} {
		fs, os := run(t, s, m, len(s.T), s.End)
		if len(fs) == 0 || len(os) == 0 {
			t.Fatalf("%s: %d forecasts, %d outcomes", m, len(fs), len(os))
		}
		scores, err := Verify(s, fs)
		if err != nil {
			t.Fatal(err)
		}
		for _, sc := range scores {
			var base float64
			switch m {
			case Persistence:
				base = sc.MSEPersistence
			case Climatology:
				base = sc.MSEClimatology
			case KSPaper:
				base = sc.MSEKSPaper
			}
			if math.Abs(sc.MSEP-base) > 1e-12 {
				t.Errorf("%s %s %g: MSE %g, the definition's %g", m, sc.Query, sc.Horizon, sc.MSEP, base)
			}
		}
		// Outcomes against the brute force.
		for _, o := range os[:200] {
			c := s.cumul(func(i int) float64 { return b2f(s.X[i] >= o.Threshold) })
			if y := c.mean(o.IssuedAt, o.IssuedAt+o.Horizon); math.Abs(y-o.ObservedP) > 1e-9 {
				t.Fatalf("%s: outcome %s = %g, brute force %g", m, o.ID, o.ObservedP, y)
			}
		}
	}
}

// Issue times are regular, from the first change to the end, and every id
// is unique.
func TestIssueTimesAndIDs(t *testing.T) {
	s := randomSteps(2, 8, 2000)
	fs, os := run(t, s, Auto, len(s.T), s.End)
	ids := map[string]bool{}
	last := map[string]float64{}
	for _, f := range fs {
		if ids[f.ID] {
			t.Fatalf("duplicate id %s", f.ID)
		}
		ids[f.ID] = true
		g := f.Query + HorizonLabel(f.Horizon)
		if prev, ok := last[g]; ok && math.Abs(f.IssuedAt-prev-0.005) > 1e-9 {
			t.Fatalf("%s: issued at %g after %g", g, f.IssuedAt, prev)
		}
		last[g] = f.IssuedAt
		empty := math.IsNaN(f.Lo) && math.IsNaN(f.Hi)
		if !(empty || f.Lo <= f.P && f.P <= f.Hi) || f.P < 0 || f.P > 1 || f.Mean < 0 || f.Mean > 1 {
			t.Fatalf("%s: p %g mean %g interval [%g, %g]", f.ID, f.P, f.Mean, f.Lo, f.Hi)
		}
	}
	for _, o := range os {
		if ids[o.ID] || !ids[o.ForecastID] {
			t.Fatalf("outcome %s: id clashes or forecast %s unknown", o.ID, o.ForecastID)
		}
	}
	if fs[0].IssuedAt != s.T[0] || last[fs[0].Query+HorizonLabel(fs[0].Horizon)] < s.End-0.005-1e-9 {
		t.Fatalf("issues span [%g, %g], run [%g, %g]", fs[0].IssuedAt, last[fs[0].Query+HorizonLabel(fs[0].Horizon)], s.T[0], s.End)
	}
}

// Cutting the input after any change leaves every forecast issued before
// the next change's time unchanged, for every method.
func TestCausalCut(t *testing.T) {
	s := randomSteps(3, 12, 1500)
	for _, m := range Methods {
		full, _ := run(t, s, m, len(s.T), s.End)
		byID := map[string]tracecast.Forecast{}
		for _, f := range full {
			byID[f.ID] = f
		}
		n := len(s.T)
		for _, cut := range []int{1, 2, 50, n / 4, n / 2, n - 1, n} {
			// The cut file ends with the change cut−1; its end is that time.
			part, _ := run(t, s, m, cut, s.T[cut-1])
			next := s.End
			if cut < len(s.T) {
				next = s.T[cut]
			}
			for _, f := range part {
				if f.IssuedAt >= next {
					t.Fatalf("%s cut %d: forecast at %g after the next change %g", m, cut, f.IssuedAt, next)
				}
				if g, ok := byID[f.ID]; !ok || !Same(g, f) {
					t.Fatalf("%s cut %d: %+v\nfull run: %+v", m, cut, f, g)
				}
			}
			before := 0
			for _, f := range full {
				if f.IssuedAt < s.T[cut-1] {
					before++
				}
			}
			if len(part) < before {
				t.Fatalf("%s cut %d: %d forecasts before %g, the full run has %d", m, cut, len(part), s.T[cut-1], before)
			}
		}
	}
}

// With no outcome known, auto forecasts its prior: between the seed's
// forecast (ks-paper) and persistence, by the two-state chain's memory.
func TestAutoStartsAtItsPrior(t *testing.T) {
	s := randomSteps(4, 12, 3000)
	a, _ := run(t, s, Auto, len(s.T), s.End)
	k, _ := run(t, s, KSPaper, len(s.T), s.End)
	p, _ := run(t, s, Persistence, len(s.T), s.End)
	n := 0
	for i := range a {
		if a[i].IssuedAt-s.T[0] >= a[i].Horizon { // an outcome may be known
			continue
		}
		n++
		lo, hi := math.Min(k[i].P, p[i].P), math.Max(k[i].P, p[i].P)
		if a[i].P < lo-1e-12 || a[i].P > hi+1e-12 {
			t.Fatalf("%s: auto %g outside [ks-paper, persistence] = [%g, %g] before any outcome", a[i].ID, a[i].P, k[i].P, p[i].P)
		}
	}
	if n < 20 {
		t.Fatalf("only %d forecasts before the first outcome", n)
	}
}

func TestTrackAgainstBruteForce(t *testing.T) {
	s := randomSteps(5, 6, 3000)
	tr := newTrack(s.T[0], b2f(s.X[0] >= 2), 0.05)
	c := s.cumul(func(i int) float64 { return b2f(s.X[i] >= 2) })
	for i := 1; i < len(s.T); i++ {
		tr.set(s.T[i], b2f(s.X[i] >= 2))
		now := s.T[i]
		for _, l := range []float64{0, 1e-4, 0.003, 0.049, now} {
			if got, want := tr.avg(now, l), c.mean(now-l, now); math.Abs(got-want) > 1e-9 {
				t.Fatalf("at %g: avg over %g = %g, want %g", now, l, got, want)
			}
		}
	}
}

func TestConformalCoverage(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	c := newConformal(500, 0.9)
	in, n := 0, 0
	for i := 0; i < 20000; i++ {
		lo, hi := c.interval(0.5)
		y := 0.5 + 0.1*rng.NormFloat64()
		ok := y >= lo && y <= hi
		if i > 1000 {
			n++
			if ok {
				in++
			}
		}
		c.outcome(ok, 0.9)
		c.add(y - 0.5)
	}
	if cov := float64(in) / float64(n); cov < 0.88 || cov > 0.92 {
		t.Fatalf("coverage %.3f, want ≈ 0.9", cov)
	}
}

func TestConfigErrors(t *testing.T) {
	q, _ := ParseQuery("idle>=1")
	for _, c := range []Config{
		{Queries: []Query{q}, Every: 0.005},
		{Horizons: []float64{1}, Every: 0.005},
		{Queries: []Query{q}, Horizons: []float64{-1}, Every: 0.005},
		{Queries: []Query{q}, Horizons: []float64{1}},
		{Queries: []Query{q}, Horizons: []float64{1}, Every: 1, Method: "oracle"},
		{Queries: []Query{q}, Horizons: []float64{1}, Every: 1, Coverage: 1.5},
		// A forecast every 0.1 µs: an endless stream of records.
		{Queries: []Query{q}, Horizons: []float64{1e-6}, Every: 1e-7},
	} {
		if _, err := New(c, Sink{}); err == nil {
			t.Errorf("%+v: no error", c)
		}
	}
	for _, s := range []string{"idle", "idle>=101%", "idle>=1.5", ">=3"} {
		if _, err := ParseQuery(s); err == nil {
			t.Errorf("query %q: no error", s)
		}
	}
}

// The rolling scores a run publishes at its end are Verify's, computed
// independently from the whole step function.
func TestRollingSkillMatchesVerify(t *testing.T) {
	s := randomSteps(6, 12, 4000)
	q1, _ := ParseQuery("idle>=25%")
	var fs []tracecast.Forecast
	last := map[string]tracecast.Skill{}
	n := 0
	e, err := New(Config{Run: "r", Class: "idle", Queries: []Query{q1}, Horizons: []float64{0.001, 0.01}, Every: 0.005, SkillEvery: 1},
		Sink{Forecast: func(f tracecast.Forecast) { fs = append(fs, f) },
			Skill: func(k tracecast.Skill) { last[k.Query+HorizonLabel(k.Horizon)] = k; n++ }})
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.T {
		e.Change(s.T[i], s.X[i], s.R[i])
	}
	e.Finish(s.End)
	scores, err := Verify(s, fs)
	if err != nil {
		t.Fatal(err)
	}
	if n <= len(scores) {
		t.Fatalf("%d skill records for %d groups: none rolled before the end", n, len(scores))
	}
	for _, sc := range scores {
		k := last[sc.Query+HorizonLabel(sc.Horizon)]
		for _, c := range [][2]float64{{k.MSEP, sc.MSEP}, {k.MSEMean, sc.MSEMean}, {k.MSEPersistence, sc.MSEPersistence},
			{k.MSEClimatology, sc.MSEClimatology}, {k.MSEKSPaper, sc.MSEKSPaper}, {k.Coverage, sc.Coverage}, {k.IntervalScore, sc.IntervalScore}} {
			if math.Abs(c[0]-c[1]) > 1e-9 || k.N != sc.N {
				t.Fatalf("%s %g: rolling %+v\nverify %+v", sc.Query, sc.Horizon, k, sc)
			}
		}
	}
}

// On a run where the class count never changes, every baseline is exact:
// its MSE is 0 and the skill against it undefined (NaN, printed "-"), not
// the ratio of two rounding errors of the running integrals (times that
// are not dyadic fractions, as a trace's are, made skills of −2200% and
// +49% here).
func TestExactBaselinesOnConstantRun(t *testing.T) {
	for _, x := range []int{0, 2} {
		s := &Steps{}
		s.Add(0.0001234567, x, 2)
		s.End = 7.7777777777
		q, _ := ParseQuery("idle>=1")
		var fs []tracecast.Forecast
		var last []tracecast.Skill
		for _, m := range []Method{Auto, Persistence, Climatology, KSPaper, Markov} {
			fs, last = fs[:0], last[:0]
			e, err := New(Config{Run: "r", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.001, 0.1, 1}, Every: 0.001, Method: m},
				Sink{Forecast: func(f tracecast.Forecast) { fs = append(fs, f) }, Skill: func(k tracecast.Skill) { last = append(last, k) }})
			if err != nil {
				t.Fatal(err)
			}
			e.Change(s.T[0], x, 2)
			e.Finish(s.End)
			scores, err := Verify(s, fs)
			if err != nil {
				t.Fatal(err)
			}
			if len(scores) != 3 || len(last) != 3 {
				t.Fatalf("%s: %d scores, %d skill records", m, len(scores), len(last))
			}
			for i, sc := range scores {
				k := last[i]
				for _, v := range []float64{sc.MSEPersistence, sc.MSEClimatology, sc.MSEKSPaper, k.MSEPersistence, k.MSEClimatology, k.MSEKSPaper} {
					if v != 0 {
						t.Errorf("x=%d %s %g: a baseline's MSE is %g, want 0", x, m, sc.Horizon, v)
					}
				}
				for _, v := range []float64{sc.SkillPersistence, sc.SkillClimatology, sc.SkillKSPaper, k.SkillPersistence, k.SkillClimatology, k.SkillKSPaper} {
					if !math.IsNaN(v) {
						t.Errorf("x=%d %s %g: skill %g against an exact baseline, want NaN", x, m, sc.Horizon, v)
					}
				}
			}
		}
	}
}

// Coverage is the share of outcomes inside the published [lo, hi], as the
// outcome records' inside says: the intervals already hold a slack for the
// rounding of the integrals, so an outcome beyond it is a miss (Verify
// counted outcomes up to 1e-9 outside as inside, and disagreed with the
// rolling scores on an SMPI run whose outcomes sit within 1e-6 of 1).
func TestVerifyCoverageIsTheIntervals(t *testing.T) {
	s := &Steps{}
	s.Add(0, 0, 2)
	s.Add(0.5, 2, 2)
	s.End = 2
	// The outcome over [0, 1) is exactly 0.5.
	for _, c := range []struct {
		lo, hi float64
		want   float64
	}{{0.5, 0.6, 1}, {0.4, 0.5, 1}, {0.5 + 5e-10, 0.6, 0}, {0.4, 0.5 - 5e-10, 0}, {math.NaN(), math.NaN(), 0}} {
		f := tracecast.Forecast{Run: "r", Query: "idle>=1", Threshold: 1, Workers: 2, IssuedAt: 0, Horizon: 1, P: 0.5, Lo: c.lo, Hi: c.hi}
		scores, err := Verify(s, []tracecast.Forecast{f})
		if err != nil {
			t.Fatal(err)
		}
		if y := Outcomes(s, []tracecast.Forecast{f})[0]; y != 0.5 {
			t.Fatalf("outcome %g, want 0.5", y)
		}
		if got := scores[0].Coverage; got != c.want {
			t.Errorf("outcome 0.5, interval [%g, %g]: coverage %g, want %g", c.lo, c.hi, got, c.want)
		}
	}
}

// k = ⌈pct·R⌉ exactly: in floating point 0.07·100 is 7.000000000000001, and
// idle>=7% of 100 workers asked for 8 of them (28% of 25: 8 for 7).
func TestPercentThresholdExact(t *testing.T) {
	for _, c := range []struct {
		q    string
		r, k int
	}{{"idle>=7%", 100, 7}, {"idle>=28%", 25, 7}, {"idle>=14%", 50, 7}, {"idle>=3.5%", 200, 7}, {"idle>=0.7%", 1000, 7},
		{"idle>=25%", 10, 3}, {"idle>=25%", 12, 3}, {"idle>=33.3%", 3, 1}, {"idle>=12.50%", 8, 1}, {"idle>=100%", 12, 12},
		{"idle>=100.0%", 7, 7}, {"idle>=0%", 5, 0}, {"idle>=0.000000000001%", 5, 1}, {"idle>=50%", 0, 0}} {
		q, err := ParseQuery(c.q)
		if err != nil {
			t.Fatal(err)
		}
		if k := q.Threshold(c.r); k != c.k {
			t.Errorf("%s of %d: k = %d, want %d", c.q, c.r, k, c.k)
		}
	}
}
