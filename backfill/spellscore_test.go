package backfill

import (
	"runtime"
	"testing"
)

// TestSpellScorerMemoryFlat: the scorer kept every issued forecast to the
// run's end for the hindsight climatology (56 bytes an issue: 1.1 GB on
// the 2.1 GB StarPU trace); it counts them by elapsed time instead. Two
// 1.8 million forecasts over 2000 one-second spells must not hold 16 MB.
func TestSpellScorerMemoryFlat(t *testing.T) {
	s := newSpellScorer([]float64{0.01})
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	for k := range 2000 {
		start := float64(k) * 2
		for i := range 900 {
			x := float64(i) * 0.001
			s.issue("w", start+x, x, 0, 0.9, 0.1, 0.5)
		}
		s.end("w", start+1, 1)
	}
	runtime.GC()
	runtime.ReadMemStats(&m1)
	if grown := int64(m1.HeapAlloc) - int64(m0.HeapAlloc); grown > 16<<20 {
		t.Errorf("the scorer holds %d MB after 1.8 M forecasts", grown>>20)
	}
	sc := s.finish()[0]
	// Every spell lasts 1 s: a forecast at x < 0.9 sees more than 10 ms
	// more, as the climatology says with hindsight.
	if sc.N != 1_800_000 || sc.BrierClimatology != 0 {
		t.Errorf("N %d, climatology's Brier %g: want 1800000, 0", sc.N, sc.BrierClimatology)
	}
	runtime.KeepAlive(s)
}
