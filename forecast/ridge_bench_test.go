package forecast

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkRidgeSolve is one solve of a ridge of 20 features (auto with
// every context feature) that has learnt 200 outcomes.
func BenchmarkRidgeSolve(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	d := 20
	w0 := make([]float64, d)
	w0[0] = 1
	r := newRidge(d, w0, 0.999, 0.3)
	f := make([]float64, d)
	for range 200 {
		for i := range f {
			f[i] = rng.Float64()
		}
		r.learn(f, rng.Float64())
	}
	b.ReportAllocs()
	for b.Loop() {
		r.dirty = true
		r.solve()
	}
}
