package forecast

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/tracecast/tracecast"
)

// stationary is R workers alternating idle and busy with lognormal
// durations (heavy-tailed, so the count is strongly autocorrelated), from
// a stationary start: no regime ever changes.
func stationary(seed uint64, r int, end float64, fn func(t float64, x int)) {
	rng := rand.New(rand.NewPCG(seed, 3))
	dur := func(mu float64) float64 { return math.Exp(mu + 1.2*rng.NormFloat64()) }
	h := &evHeap{}
	x := 0
	for w := 0; w < r; w++ {
		idle := rng.IntN(3) == 0
		if idle {
			x++
		}
		heap.Push(h, ev{t: rng.Float64() * 0.01, w: w, idle: idle})
	}
	fn(0, x)
	for h.Len() > 0 {
		e := heap.Pop(h).(ev)
		if e.t > end {
			break
		}
		if e.idle {
			x--
		} else {
			x++
		}
		fn(e.t, x)
		mu := math.Log(0.004) // busy: ~4 ms median
		if !e.idle {
			mu = math.Log(0.001) // idle: ~1 ms median
		}
		heap.Push(h, ev{t: e.t + dur(mu), w: e.w, idle: !e.idle})
	}
}

type ev struct {
	t    float64
	w    int
	idle bool
}
type evHeap []ev

func (h evHeap) Len() int           { return len(h) }
func (h evHeap) Less(i, j int) bool { return h[i].t < h[j].t }
func (h evHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *evHeap) Push(x any)        { *h = append(*h, x.(ev)) }
func (h *evHeap) Pop() any          { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

// On stationary signals the regime-change test's false-alarm rate (windows
// alarmed / windows tested) stays at or below its level, at every window
// length: the autocorrelation is in the past changes it ranks against.
func TestRegimeFalseAlarms(t *testing.T) {
	q, _ := ParseQuery("idle>=25%")
	for _, alpha := range []float64{0.05, 0.01} {
		for _, l := range []float64{0.002, 0.01, 0.05} {
			tests, alarms := 0, 0
			for seed := uint64(1); seed <= 4; seed++ {
				e, err := New(Config{Run: "s", Class: "idle", Queries: []Query{q}, Horizons: []float64{l}, Every: l,
					RegimeAlpha: alpha}, Sink{Episode: func(tracecast.Episode) {}})
				if err != nil {
					t.Fatal(err)
				}
				stationary(seed, 12, 40, func(tt float64, x int) { e.Change(tt, x, 12) })
				e.Finish(40)
				tests += e.regime.tests
				alarms += e.regime.alarms
			}
			rate := float64(alarms) / float64(tests)
			t.Logf("alpha %g, window %g s: %d alarms in %d windows (%.4f)", alpha, l, alarms, tests, rate)
			// The nominal level, with three binomial standard errors of slack.
			if rate > alpha+3*math.Sqrt(alpha*(1-alpha)/float64(tests)) {
				t.Errorf("alpha %g, window %g s: false-alarm rate %.4f above the level", alpha, l, rate)
			}
		}
	}
}

// A real change is found: the idle share jumps from 20% to 70%.
func TestRegimeDetectsChange(t *testing.T) {
	q, _ := ParseQuery("idle>=25%")
	var eps []tracecast.Episode
	e, _ := New(Config{Run: "s", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.01}, Every: 0.01, RegimeAlpha: 0.01},
		Sink{Episode: func(x tracecast.Episode) { eps = append(eps, x) }})
	rng := rand.New(rand.NewPCG(1, 1))
	for tt := 0.0; tt < 10; tt += 0.0005 {
		share := 0.2
		if tt >= 6 {
			share = 0.7
		}
		x := 0
		for range 12 {
			if rng.Float64() < share {
				x++
			}
		}
		e.Change(tt, x, 12)
	}
	e.Finish(10)
	found := false
	for _, x := range eps {
		if x.Kind == "regime-change" && x.State == "open" && math.Abs(x.Start-6) < 0.05 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no regime change at 6 s: %+v", eps)
	}
}

// One idle-opportunity episode per stretch of high forecasts, opened and
// closed once, with distinct ids.
func TestOpportunityEpisodes(t *testing.T) {
	q, _ := ParseQuery("idle>=1")
	var eps []tracecast.Episode
	e, _ := New(Config{Run: "s", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.01}, Every: 0.001, Method: KSPaper,
		OpportunityThreshold: 0.8}, Sink{Episode: func(x tracecast.Episode) { eps = append(eps, x) }})
	// Idle from 1 s to 2 s and from 3 s to 3.5 s, busy otherwise.
	e.Change(0, 0, 4)
	e.Change(1, 2, 4)
	e.Change(2, 0, 4)
	e.Change(3, 1, 4)
	e.Change(3.5, 0, 4)
	e.Finish(5)
	if len(eps) != 4 || eps[0].State != "open" || eps[1].State != "closed" || eps[0].ID == eps[1].ID || eps[2].ID == eps[0].ID {
		t.Fatalf("episodes: %+v", eps)
	}
	if math.Abs(eps[0].Start-1.008) > 0.0011 || math.Abs(eps[1].End-2.003) > 0.0011 || !math.IsNaN(eps[0].End) {
		t.Fatalf("episode 0 from %g to %g", eps[1].Start, eps[1].End)
	}
}
