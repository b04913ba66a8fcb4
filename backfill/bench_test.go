package backfill

import (
	"math/rand/v2"
	"testing"

	"github.com/tracecast/tracecast"
)

// BenchmarkSpellForecasts measures the engine as the live stage runs it
// for spell forecasts alone (12 workers, three lengths, a forecast every
// millisecond of idle): state changes per second (the issue asks ≥ 1 M per
// core).
func BenchmarkSpellForecasts(b *testing.B) {
	benchEngine(b, Config{Run: "r", Mode: Wait, Alphas: []float64{10}, Policies: []string{Never}, SpellLengths: []float64{0.001, 0.01, 0.1}})
}

// BenchmarkBackfill is the engine with every causal policy for three task
// lengths and two α.
func BenchmarkBackfill(b *testing.B) {
	benchEngine(b, Config{Run: "r", Tasks: []float64{0.001, 0.01, 0.1}, Mode: Wait, Alphas: []float64{1, 10},
		Policies: []string{Greedy, OnlineTimeout, Residual, Forecast}})
}

func benchEngine(b *testing.B, cfg Config) {
	rng := rand.New(rand.NewPCG(5, 6))
	evs, _, end := randomRun(rng, 12, 20000)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		e, err := New(cfg, Sink{Decision: func(tracecast.Decision) {}, Spell: func(tracecast.SpellForecast) {}})
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range evs {
			e.Change(ev.t, ev.w, ev.idle)
		}
		e.Finish(end)
	}
	b.ReportMetric(float64(len(evs))*float64(b.N)/b.Elapsed().Seconds(), "changes/s")
}
