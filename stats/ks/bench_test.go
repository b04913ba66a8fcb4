package ks

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func BenchmarkHistAdd(b *testing.B) {
	h := NewHist(256)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Add(i & 255)
	}
}

func BenchmarkHistAddRemove(b *testing.B) {
	h := NewHist(256)
	h.Add(3)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		h.Add(i & 255)
		h.Remove(i & 255)
	}
}

func BenchmarkD(b *testing.B) {
	for _, R := range []int{12, 256} {
		rng := rand.New(rand.NewPCG(1, uint64(R)))
		x, y := sample(rng, R, 50000, 0), sample(rng, R, 50000, 1)
		b.Run(fmt.Sprintf("R=%d", R), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				D(x, y)
			}
		})
	}
}

// BenchmarkTest measures one p-value per method and regime (R = 12).
func BenchmarkTest(b *testing.B) {
	sizes := []int{50, 99, 1000, 10000, 25000}
	for _, m := range Methods {
		for _, n := range sizes {
			rng := rand.New(rand.NewPCG(2, uint64(n)))
			x, y := sample(rng, 12, n, 0), sample(rng, 12, n, 0)
			b.Run(fmt.Sprintf("%s/n=%d", m, n), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					Test(x, y, m, DefaultAlpha)
				}
			})
		}
	}
	// SciPy's exact branch for unequal sizes is the expensive one.
	rng := rand.New(rand.NewPCG(3, 3))
	x, y := sample(rng, 12, 9999, 0), sample(rng, 12, 10000, 0)
	b.Run("scipy/n=9999x10000", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			Test(x, y, SciPy, DefaultAlpha)
		}
	})
}

// sweepSignal is the benchmark signal: 10^7 samples of a lazy random walk on
// 0..12 (a 12-worker occurrence signal), generated once.
var sweepSignal = sync.OnceValue(func() []int { return randomWalk(42, 10_000_000, 12) })

// sweepWindows are the paper's candidate window sizes, 1000..50000 step 1000.
func sweepWindows() []int {
	w := make([]int, 50)
	for i := range w {
		w[i] = 1000 * (i + 1)
	}
	return w
}

// BenchmarkSweep runs the paper's whole sweep (50 window sizes over a 10^7
// sample signal, consecutive windows compared with the MATLAB formula) and
// reports the time per signal sample. Target: the whole sweep under 2 s on one
// core.
func BenchmarkSweep(b *testing.B) {
	signal := sweepSignal()
	windows := sweepWindows()
	for _, m := range Methods {
		b.Run(string(m), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Sweep(signal, 12, windows, m, DefaultAlpha)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(signal)), "ns/sample")
		})
	}
}

// TestSweepTiming runs the benchmark sweep once and fails if it takes more
// than 2 s (skipped with -short and under the race detector, which slows it
// down by an order of magnitude).
func TestSweepTiming(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("timing test skipped in -short mode and under -race")
	}
	signal := sweepSignal()
	start := time.Now()
	res := Sweep(signal, 12, sweepWindows(), Matlab, DefaultAlpha)
	el := time.Since(start)
	compared := 0
	for _, r := range res {
		compared += r.Compared
	}
	t.Logf("sweep of %d samples × %d windows: %v (%.2f ns/sample, %d comparisons); w=1000 hit-rate %.3f, w=50000 hit-rate %.3f",
		len(signal), len(res), el, float64(el.Nanoseconds())/float64(len(signal)), compared, res[0].HitRate, res[len(res)-1].HitRate)
	if el > 2*time.Second {
		t.Errorf("sweep took %v, target < 2 s", el)
	}
}
