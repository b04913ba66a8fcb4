package signal

import (
	"math/rand/v2"
	"testing"

	"github.com/tracecast/tracecast"
)

// synthetic returns a StarPU-like signal: 12 workers alternating tasks and
// idle periods, about a million states.
func synthetic(b *testing.B) *Signal {
	r := StarPU()
	r.Compile()
	bl := NewBuilder(r)
	rng := rand.New(rand.NewPCG(1, 2))
	var es []tracecast.Entity
	for w := range 12 {
		name := "CPU" + string(rune('A'+w))
		t := 0.0
		for range 40000 {
			d := rng.ExpFloat64() * 0.4
			es = append(es, tracecast.Entity{Nature: tracecast.NatureState, Container: name, Type: "Worker State", Start: t, End: t + d, Value: "GEMM"})
			t += d
			d = rng.ExpFloat64() * 0.1
			es = append(es, tracecast.Entity{Nature: tracecast.NatureState, Container: name, Type: "Worker State", Start: t, End: t + d, Value: "Sleeping"})
			t += d
		}
	}
	bl.Add(es)
	sig, err := bl.Build()
	if err != nil {
		b.Fatal(err)
	}
	return sig
}

// BenchmarkSample measures the sampler: samples per second over a signal of
// ~10⁶ changes, 10⁷ samples per op.
func BenchmarkSample(b *testing.B) {
	sig := synthetic(b)
	period := (sig.End - sig.T0()) / 1e7
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		sum := 0
		n = sig.Sample(Idle, period, func(_ int, _ float64, x int) { sum += x })
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "samples/s")
}

// BenchmarkBuild measures turning ~10⁶ states into the step function.
func BenchmarkBuild(b *testing.B) {
	r := StarPU()
	r.Compile()
	rng := rand.New(rand.NewPCG(1, 2))
	var es []tracecast.Entity
	t := 0.0
	for range 1_000_000 {
		d := rng.ExpFloat64()
		es = append(es, tracecast.Entity{Nature: tracecast.NatureState, Container: "CPU" + string(rune('A'+rng.IntN(12))), Type: "Worker State", Start: t, End: t + d, Value: "GEMM"})
		t += d / 12
	}
	b.ReportAllocs()
	for b.Loop() {
		bl := NewBuilder(r)
		bl.Add(es)
		if _, err := bl.Build(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(es))*float64(b.N)/b.Elapsed().Seconds(), "states/s")
}
