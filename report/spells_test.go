package report

import (
	"context"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	bf "github.com/tracecast/tracecast/backfill"
	stage "github.com/tracecast/tracecast/stages/backfill"
)

// TestSpellsOverGantt: the spells drawn over the Gantt chart are every
// idle and busy spell of every worker, each with the forecast `tracecast
// predict --spells` publishes at its start (the backfill engine on the
// backfill survey and feed, its default cadence); the calibration table
// counts them. Past MaxSpells, each row keeps at most two per column.
func TestSpellsOverGantt(t *testing.T) {
	ctx := context.Background()
	for _, path := range []string{demoTrace, "../testdata/smpi/jacobi-8.trace.gz"} {
		t.Run(path, func(t *testing.T) {
			p := page(t, path, PageOptions{})
			sv := stage.NewSurvey("auto", "")
			if err := readTrace(path, sv); err != nil {
				t.Fatal(err)
			}
			sv.Close(ctx)
			type start struct {
				t, q10, q50 float64
				busy        bool
			}
			want := map[string][]start{}
			eng, err := bf.New(bf.Config{Run: "r", Mode: bf.Wait, Alphas: []float64{1}, Policies: []string{bf.Never}, SpellLengths: []float64{0.001, 0.01}},
				bf.Sink{Spell: func(f tracecast.SpellForecast) {
					if f.Elapsed == 0 && f.D == 0.001 {
						want[f.Worker] = append(want[f.Worker], start{f.IssuedAt, f.Q10, f.Q50, f.State == "busy"})
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			feed := stage.NewFeed(eng, sv.Rules, sv.Unit, sv)
			if err := readTrace(path, feed); err != nil {
				t.Fatal(err)
			}
			feed.Close(ctx)
			eng.Finish(math.Max(feed.End(), sv.End))
			q := func(x float64) float64 {
				if math.IsInf(x, 1) {
					return -1
				}
				return x
			}
			busy, total := 0, 0
			for r, name := range p.Gantt.Rows {
				ticks, w := p.Spells.Ticks[r], want[name]
				if len(ticks) != 5*len(w) {
					t.Fatalf("%s: %d spells drawn, %d forecast at their start", name, len(ticks)/5, len(w))
				}
				for i, s := range w {
					tk := ticks[5*i : 5*i+5]
					if math.Abs(p.Gantt.T0+tk[0]-s.t) > 1e-8 || math.Abs(tk[2]-q(s.q10)) > 1e-8 || math.Abs(tk[3]-q(s.q50)) > 1e-8 || (tk[4] == 1) != s.busy {
						t.Fatalf("%s spell %d: drawn %v, forecast %+v", name, i, tk, s)
					}
					if s.busy {
						busy++
					}
				}
				total += len(w)
			}
			if busy == 0 || busy == total {
				t.Fatalf("%d busy spells of %d", busy, total)
			}
			all := p.spells.Rows[0]
			if all.Worker != "all workers" || all.IdleN == "0" || all.BusyN == "0" {
				t.Errorf("calibration %+v", all)
			}
			t.Logf("%d spells (%d busy); all workers: %+v", total, busy, all)

			// Read as the report command reads it, following the selected
			// states' watermark: the same spells and forecasts.
			wm, _, err := pageOfBatches("auto", PageOptions{Title: path}, batchesOf(t, path)...)
			if err != nil {
				t.Fatal(err)
			}
			// The changes wait for the task counts read past them: the
			// same forecasts as from the whole file.
			differ := 0
			for r := range p.Spells.Ticks {
				a, b := wm.Spells.Ticks[r], p.Spells.Ticks[r]
				if len(a) != len(b) {
					t.Fatalf("with watermarks, row %d: %d spells, want %d", r, len(a)/5, len(b)/5)
				}
				for i := 0; i < len(a); i += 5 {
					if a[i] != b[i] || a[i+1] != b[i+1] || a[i+4] != b[i+4] {
						t.Fatalf("with watermarks, row %d: spell %v, want %v", r, a[i:i+5], b[i:i+5])
					}
					if a[i+2] != b[i+2] || a[i+3] != b[i+3] {
						differ++
					}
				}
			}
			t.Logf("with watermarks: %d forecasts of %d differ", differ, total)
			if differ > 0 {
				t.Errorf("with watermarks: %d forecasts of %d differ", differ, total)
			}

			// Bounded: past MaxSpells, at most an idle and a busy spell per
			// row and column, and the same calibration.
			agg := page(t, path, PageOptions{MaxSpells: 100, GanttBins: 50})
			if !agg.Spells.Aggregated {
				t.Fatal("not aggregated past MaxSpells")
			}
			for r := range agg.Spells.Ticks {
				if n := len(agg.Spells.Ticks[r]) / 5; n > 2*10 || n == 0 {
					t.Errorf("row %d: %d spells kept, at most 20", r, n)
				}
			}
			if agg.spells.Rows[0] != all {
				t.Errorf("aggregated calibration %+v, want %+v", agg.spells.Rows[0], all)
			}
		})
	}
}

// TestSpellsTooManyRows: past maxSpellRows the page keeps the calibration
// counts, no spell to draw (page.js would not draw them on rows that thin).
func TestSpellsTooManyRows(t *testing.T) {
	var es []tracecast.Entity
	for w := range maxSpellRows + 5 {
		name := "CPU" + strconv.Itoa(w)
		for k := range 20 {
			t0 := float64(10 * k)
			es = append(es, tracecast.Entity{Nature: tracecast.NatureState, Container: name, Type: "Worker State", Start: t0, End: t0 + 6, Value: "GEMM"},
				tracecast.Entity{Nature: tracecast.NatureState, Container: name, Type: "Worker State", Start: t0 + 6, End: t0 + 10, Value: "Sleeping"})
		}
	}
	p, _, err := pageOfBatches("auto", PageOptions{Title: "many"}, tracecast.Batch{Items: es, Watermark: math.NaN()})
	if err != nil {
		t.Fatal(err)
	}
	if !p.Spells.Undrawn {
		t.Error("spells to draw on 80 rows")
	}
	for r, ticks := range p.Spells.Ticks {
		if len(ticks) != 0 {
			t.Fatalf("row %d: %d spells kept", r, len(ticks)/5)
		}
	}
	if all := p.spells.Rows[0]; all.BusyN != strconv.Itoa(20*(maxSpellRows+5)) || p.spells.Omitted != maxSpellRows+5-maxCalRows {
		t.Errorf("calibration %+v, %d omitted", all, p.spells.Omitted)
	}
	var html strings.Builder
	if err := p.WriteHTML(&html); err != nil || !strings.Contains(html.String(), "too many rows to draw them on") {
		t.Errorf("the page does not say why no spell is drawn (%v)", err)
	}
}

// TestSpellsAsyncWaited: with SpellsAsync, the collector hands the spell
// forecaster's work to run and reads its results only after wait: here
// run only queues the work and wait does it all, yet the page is the page
// of the collector that does it within WriteStates.
func TestSpellsAsyncWaited(t *testing.T) {
	want := page(t, demoTrace, PageOptions{})
	s, err := NewPageSurvey("auto")
	if err != nil {
		t.Fatal(err)
	}
	if err := readTrace(demoTrace, s); err != nil {
		t.Fatal(err)
	}
	c, err := s.Collector(PageOptions{Title: demoTrace})
	if err != nil {
		t.Fatal(err)
	}
	var queued []func()
	c.SpellsAsync(func(f func()) { queued = append(queued, f) }, func() {
		for _, f := range queued {
			f()
		}
		queued = nil
	})
	if err := readTrace(demoTrace, c); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	got, err := c.Page()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Spells, want.Spells) || !reflect.DeepEqual(got.spells, want.spells) || len(want.Spells.Ticks) == 0 {
		t.Errorf("spells drawn with the work deferred to wait differ from those drawn in WriteStates")
	}
}
