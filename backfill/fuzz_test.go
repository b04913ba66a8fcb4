package backfill

import (
	"math"
	"testing"

	"github.com/tracecast/tracecast"
)

// FuzzEngine feeds the engine arbitrary change sequences — times that go
// back, repeat, jump; workers that appear late or change nothing — in both
// modes, gangs too, and checks that it never panics and that its totals
// stay meaningful: U, W, D ≥ 0, every decision inside [start of run, end],
// V finite or undefined.
func FuzzEngine(f *testing.F) {
	f.Add([]byte{1, 0, 1, 2, 1, 0, 3, 0, 1, 4, 2, 1, 0, 1, 0}, uint8(0))
	f.Add([]byte{0, 0, 1, 0, 0, 0, 0, 1, 1, 255, 3, 0}, uint8(3))
	f.Fuzz(func(t *testing.T, data []byte, opts uint8) {
		mode := Kill
		if opts&1 != 0 {
			mode = Wait
		}
		cfg := Config{Run: "r", Tasks: []float64{0.001, 0.01}, Overhead: float64(opts>>4) * 1e-4, Mode: mode, Alphas: []float64{1, 10},
			Timeouts: []float64{0.002}, SpellLengths: []float64{0.001}, KeepSpells: true}
		if opts&2 != 0 {
			cfg.Gang = 2
		}
		var decisions []tracecast.Decision
		e, err := New(cfg, Sink{Decision: func(d tracecast.Decision) { decisions = append(decisions, d) }, Spell: func(tracecast.SpellForecast) {}})
		if err != nil {
			t.Fatal(err)
		}
		now, latest := 0.0, 0.0
		for i := 0; i+2 < len(data) && i < 3000; i += 3 {
			// A step of up to 12.7 ms, sometimes back in time (a late
			// change counts at the latest time seen).
			step := float64(int8(data[i])) * 1e-4
			now += step
			latest = math.Max(latest, now)
			e.Change(now, string(rune('a'+data[i+1]%5)), data[i+2]&1 == 1)
		}
		res := e.Finish(now)
		if res == nil {
			t.Fatal("no result")
		}
		for _, r := range res.Rows {
			if r.Harvest < 0 || r.Waste < 0 || r.Delay < 0 || math.IsInf(r.Value, 0) || math.IsNaN(r.Harvest+r.Waste+r.Delay) {
				t.Fatalf("row %+v", r)
			}
		}
		for _, d := range decisions {
			if math.IsNaN(d.Start) || d.Start > latest+1e-9 {
				t.Fatalf("decision %+v after the run's end %g", d, latest)
			}
		}
	})
}
