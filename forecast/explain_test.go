package forecast

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// explainStream runs auto over a synthetic stream of 4 workers in blocks of
// H = 10 ms, issued at each block's start: in block b all are idle for
// the first s_b·H, s_b uniform, then all busy, so the outcome of
// idle>=1 is s_b. The context announces s_b through the field signal
// sets (the feature that fully determines the outcome) and noise through
// noise; the occupancy features see the past blocks only, which are
// independent. It returns the explanation records and the forecasts.
func explainStream(t *testing.T, signal, noise func(c *Context, v float64), explain bool) ([]tracecast.Explanation, []tracecast.Forecast) {
	t.Helper()
	const h, blocks, r = 0.01, 3000, 4
	rng := rand.New(rand.NewPCG(7, 7))
	s := make([]float64, blocks+2)
	z := make([]float64, blocks+2)
	for i := range s {
		s[i] = 0.05 + 0.9*rng.Float64()
		z[i] = rng.Float64()
	}
	q, _ := ParseQuery("idle>=1")
	var xs []tracecast.Explanation
	var fs []tracecast.Forecast
	sink := Sink{Forecast: func(f tracecast.Forecast) { fs = append(fs, f) }}
	if explain {
		sink.Explain = func(x tracecast.Explanation) { xs = append(xs, x) }
	}
	e, err := New(Config{Run: "x", Class: "idle", Queries: []Query{q}, Horizons: []float64{h}, Every: h}, sink)
	if err != nil {
		t.Fatal(err)
	}
	e.SetContext(func(t float64, c *Context) {
		b := int(math.Round(t / h))
		signal(c, s[b])
		noise(c, z[b])
	})
	for b := 0; b < blocks; b++ {
		t0 := float64(b) * h
		e.Change(t0, r, r)
		e.Change(t0+s[b]*h, 0, r)
	}
	e.Finish(blocks * h)
	return xs, fs
}

// The context fields a test stream can carry a value in [0, 1] through,
// and the feature of the learner that reads it.
var explainFields = map[string]func(c *Context, v float64){
	"ready_tasks":   func(c *Context, v float64) { c.Ready = 8 * v },     // ready/R at most 2, halved: v
	"communicating": func(c *Context, v float64) { c.Comm = int(4 * v) }, // Comm/R: v rounded down to quarters
}

func TestExplainRanksTheFeatureThatDecides(t *testing.T) {
	for _, tc := range []struct{ signal, noise string }{
		{"ready_tasks", "communicating"},
		{"communicating", "ready_tasks"},
	} {
		t.Run(tc.signal, func(t *testing.T) {
			xs, _ := explainStream(t, explainFields[tc.signal], explainFields[tc.noise], true)
			var feats []tracecast.Explanation
			var learnerW float64
			for _, x := range xs {
				switch {
				case x.Kind == "feature":
					feats = append(feats, x)
				case x.Kind == "expert" && x.Name == "learner":
					learnerW = x.Weight
				}
			}
			if len(feats) != len(Features)-1 {
				t.Fatalf("%d feature records, want %d", len(feats), len(Features)-1)
			}
			by := map[string]tracecast.Explanation{}
			for _, f := range feats {
				by[f.Name] = f
			}
			top := by[tc.signal]
			for _, f := range feats {
				if f.Name != tc.signal && f.Present && (f.ImportanceLearner >= top.ImportanceLearner || f.ImportanceMix >= top.ImportanceMix) {
					t.Errorf("%s: +MSE %g (learner), %g (forecast), not below %s's %g, %g", f.Name, f.ImportanceLearner, f.ImportanceMix, tc.signal, top.ImportanceLearner, top.ImportanceMix)
				}
			}
			// The outcome is uniform on [0.05, 0.95]: permuting the feature
			// that decides it costs about twice its variance (0.0675·2).
			if top.ImportanceLearner < 0.05 {
				t.Errorf("%s: +MSE of the learner %g, want near 0.13", tc.signal, top.ImportanceLearner)
			}
			if nz := by[tc.noise]; !nz.Present || math.Abs(nz.ImportanceLearner) > 0.01*top.ImportanceLearner || math.Abs(nz.ImportanceMix) > 0.01*top.ImportanceMix {
				t.Errorf("noise %s: %+v, want present and near 0", tc.noise, nz)
			}
			// No task submitted: the task counts' features are absent
			// (not 0), and so is the queue expert.
			for _, name := range []string{"waiting_tasks", "no_task_waiting", "end_phase"} {
				if f := by[name]; f.Present || !math.IsNaN(f.ImportanceMix) {
					t.Errorf("%s: %+v, want absent", name, f)
				}
			}
			if learnerW < 0.5 {
				t.Errorf("the learner's mean weight in the mix %g, want most of it", learnerW)
			}
			var buf bytes.Buffer
			if err := WriteExplanations(&buf, xs); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(buf.String(), "\n")
			t.Logf("\n%s", buf.String())
			for i, l := range lines {
				if strings.HasPrefix(strings.TrimSpace(l), "feature ") {
					if !strings.HasPrefix(strings.TrimSpace(lines[i+1]), tc.signal+" ") {
						t.Errorf("first feature row %q, want %s", lines[i+1], tc.signal)
					}
				}
			}
			if !strings.Contains(buf.String(), "waiting_tasks") || !strings.Contains(buf.String(), "absent") {
				t.Errorf("no absent row in the table")
			}
		})
	}
}

// TestExplainChangesNoForecast: the forecasts are the same with and without
// Explain, and the explanation's numbers are the run's: the forecast's MSE
// is the rolling skill's last, and each sampled row's mix reconstructs
// its forecast.
func TestExplainChangesNoForecast(t *testing.T) {
	xs, with := explainStream(t, explainFields["ready_tasks"], explainFields["communicating"], true)
	_, without := explainStream(t, explainFields["ready_tasks"], explainFields["communicating"], false)
	if len(with) != len(without) || len(with) == 0 {
		t.Fatalf("%d forecasts with explain, %d without", len(with), len(without))
	}
	for i := range with {
		if !Same(with[i], without[i]) {
			t.Fatalf("forecast %d: %+v with explain, %+v without", i, with[i], without[i])
		}
	}
	if xs[0].Kind != "forecast" || xs[0].N == 0 {
		t.Fatalf("first record %+v", xs[0])
	}
	// The rolling score over the same outcomes.
	q, _ := ParseQuery("idle>=25%")
	var last tracecast.Skill
	var ex []tracecast.Explanation
	e, _ := New(Config{Run: "m", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.01}, Every: 0.001},
		Sink{Skill: func(s tracecast.Skill) { last = s }, Explain: func(x tracecast.Explanation) { ex = append(ex, x) }})
	end := flicker(e, 200_000, 3)
	e.Finish(end)
	if ex[0].N != last.N || math.Abs(ex[0].MSE-last.MSEP) > 1e-12 {
		t.Errorf("explained forecast: n %d, MSE %g; the run's score: n %d, MSE %g", ex[0].N, ex[0].MSE, last.N, last.MSEP)
	}
	var wsum float64
	for _, x := range ex {
		if x.Kind == "expert" {
			wsum += x.Weight
		}
	}
	if math.Abs(wsum-1) > 1e-9 {
		t.Errorf("the experts' mean weights add up to %g", wsum)
	}
	g := e.groups[0]
	for _, row := range g.ex.sample {
		ex := row[2*g.ex.d:]
		if p0 := (1-ex[rowG])*row[featKS] + ex[rowG]*row[featNow]; math.Abs(p0-ex[rowExp+expPrior]) > 1e-12 ||
			ex[rowExp+expKS] != row[featKS] || ex[rowExp+expPersistence] != row[featNow] || ex[rowExp+expClimatology] != row[featClim] {
			t.Fatalf("experts %v, features %v", ex[rowExp:rowW], row[:g.ex.d])
		}
		// Each expert that reads a feature, given the feature's own
		// value, gives the forecast as issued.
		for j := 1; j < g.ex.d; j++ {
			if got, _ := g.ex.mix(row, j, row[j]); math.Abs(got-row[2*g.ex.d+rowMix]) > 1e-12 {
				t.Fatalf("feature %d: mix %g, forecast %g", j, got, row[2*g.ex.d+rowMix])
			}
		}
	}
	if n := len(g.ex.sample); n != ex[0].N {
		t.Errorf("sample of %d rows of %d scored", n, ex[0].N)
	}
}

// Without a context feed, the context features are absent.
func TestExplainWithoutContext(t *testing.T) {
	q, _ := ParseQuery("idle>=25%")
	var ex []tracecast.Explanation
	e, _ := New(Config{Run: "m", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.01}, Every: 0.001},
		Sink{Explain: func(x tracecast.Explanation) { ex = append(ex, x) }})
	e.Finish(flicker(e, 20_000, 4))
	for _, x := range ex {
		ctx := x.Kind == "feature" && !strings.HasPrefix(x.Name, "occupancy") && !strings.HasPrefix(x.Name, "now") && x.Name != "climatology"
		queue := x.Kind == "expert" && x.Name == "queue"
		if x.Present == (ctx || queue) {
			t.Errorf("%s %s: present %v", x.Kind, x.Name, x.Present)
		}
	}
}

// BenchmarkEngineExplain is BenchmarkEngine's auto+context with Explain
// on: what --explain costs per change (a row kept per issue until its
// outcome, the sample, the permutations at the end).
func BenchmarkEngineExplain(b *testing.B) {
	q, _ := ParseQuery("idle>=25%")
	explained := 0
	e, err := New(Config{Run: "b", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.01}, Every: 0.001, Method: Auto},
		Sink{Explain: func(tracecast.Explanation) { explained++ }})
	if err != nil {
		b.Fatal(err)
	}
	e.SetContext(fullContext)
	b.ReportAllocs()
	b.ResetTimer()
	e.Finish(flicker(e, b.N, 1))
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
	if explained == 0 {
		b.Fatal("nothing explained")
	}
}
