package forecast

import (
	"github.com/tracecast/tracecast"
	"math/rand/v2"
	"testing"
)

// flicker feeds n changes of a 12-worker count flickering every ~10 µs
// around the threshold, as StarPU workers do between tasks.
func flicker(e *Engine, n int, seed uint64) float64 {
	rng := rand.New(rand.NewPCG(seed, 1))
	t, x := 0.0, 6
	for i := 0; i < n; i++ {
		e.Change(t, x, 12)
		x = max(0, min(12, x+rng.IntN(3)-1))
		t += 2e-5 * rng.ExpFloat64()
	}
	return t
}

// BenchmarkEngine: state changes per second for one query and horizon
// (auto, 10 ms, issued every 1 ms), the cost the live service pays per
// change; forecasts per second follow from the issue cadence.
func BenchmarkEngine(b *testing.B) {
	for _, m := range []Method{Auto, KSPaper, "auto+context"} {
		b.Run(string(m), func(b *testing.B) {
			q, _ := ParseQuery("idle>=25%")
			forecasts := 0
			method := m
			if m == "auto+context" {
				method = Auto
			}
			e, err := New(Config{Run: "b", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.01}, Every: 0.001, Method: method},
				Sink{Forecast: func(f tracecast.Forecast) { forecasts++ }})
			if err != nil {
				b.Fatal(err)
			}
			if m == "auto+context" {
				// Every feature, as a StarPU trace's feed gives them
				// (12 workers: 6 busy, 6 idle).
				e.SetContext(fullContext)
			}
			b.ReportAllocs()
			b.ResetTimer()
			flicker(e, b.N, 1)
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "changes/s")
			b.ReportMetric(float64(forecasts)/b.Elapsed().Seconds(), "forecasts/s")
		})
	}
}

// Memory follows the look-back, not the trace: after 10× more changes the
// engine keeps as many change points.
func TestMemoryBounded(t *testing.T) {
	kept := func(n int) int {
		q, _ := ParseQuery("idle>=25%")
		e, _ := New(Config{Run: "m", Class: "idle", Queries: []Query{q}, Horizons: []float64{0.01}, Every: 0.001}, Sink{})
		flicker(e, n, 2)
		c := cap(e.mean.hist)
		for _, tr := range e.ind {
			c += cap(tr.hist)
		}
		for _, g := range e.groups {
			c += cap(g.pending)
		}
		return c
	}
	small, large := kept(200_000), kept(2_000_000)
	if large > 2*small {
		t.Fatalf("kept %d entries after 2e6 changes, %d after 2e5: memory grows with the trace", large, small)
	}
}

// fullContext gives every context feature, as a StarPU trace's feed does
// (12 workers: 6 busy, 6 idle).
func fullContext(_ float64, c *Context) {
	c.Ready, c.Submitted, c.SinceSubmit = 3, 9, 0.002
	for i := 0; i < 6; i++ {
		c.Busy = append(c.Busy, 0.001*float64(i))
		c.Idle = append(c.Idle, Spell{Age: 0.0001 * float64(i), Remaining: 0.002})
	}
	c.Comm = 1
}
