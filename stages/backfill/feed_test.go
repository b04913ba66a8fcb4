package backfill

import (
	"context"
	"testing"

	"github.com/tracecast/tracecast"
	bf "github.com/tracecast/tracecast/backfill"
)

// TestFeedSweepsPastAVariableSetOnce: a variable set once at the start (of
// a type the feed does not read) held the batches' Watermark back to its
// time, so the feed swept nothing before the run's end and kept every
// state (591 MiB for predict --spells on ten times the 41 MB StarPU
// trace). The feed sweeps to the workers' state type's watermark and the
// task counts' starts instead: forecasts come while the run goes on.
func TestFeedSweepsPastAVariableSetOnce(t *testing.T) {
	spells := 0
	eng, err := bf.New(bf.Config{Run: "r", Mode: bf.Wait, Alphas: []float64{10}, Policies: []string{bf.Never}, SpellLengths: []float64{0.001}, Every: 0.001},
		bf.Sink{Spell: func(tracecast.SpellForecast) { spells++ }})
	if err != nil {
		t.Fatal(err)
	}
	f := NewFeed(eng, "starpu", "ms", nil)
	ctx := context.Background()
	state := func(w string, a, b float64, v string) tracecast.Entity {
		return tracecast.Entity{Nature: tracecast.NatureState, Container: w, Type: "Worker State", Start: a, End: b, Value: v}
	}
	const stuck = 0.004 // ms: the variable set once, its piece open till the end
	var before int
	for i := range 200 {
		t0 := float64(i) * 10 // ms
		es := []tracecast.Entity{state("CPU0", t0, t0+5, "GEMM"), state("CPU0", t0+5, t0+10, "Idle")}
		b := tracecast.Batch{Stream: "x", Items: es, Watermark: stuck,
			TypeWatermarks: map[string]float64{"Worker State": t0 + 10},
			VariableStarts: map[string]float64{"Memory": stuck, ReadyVariable: t0 + 10}}
		if err := f.Write(ctx, b); err != nil {
			t.Fatal(err)
		}
		if i == 99 {
			before = spells
		}
	}
	if err := f.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if before == 0 || spells == 0 {
		t.Fatalf("%d spell forecasts halfway through the run (%d in all): the feed waited for the end", before, spells)
	}
	// The ready count's pieces bound the sweep too: a count changed at 12
	// ms and not emitted yet (its piece is open) holds the feed there.
	if w := f.watermark(tracecast.Batch{Watermark: 1, TypeWatermarks: map[string]float64{"Worker State": 50},
		VariableStarts: map[string]float64{ReadyVariable: 12, "Memory": 1}}); w != 12 {
		t.Errorf("watermark %v, want 12 (the open ready count's start)", w)
	}
}
