package component

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
)

// reporter counts the batches of its stream (a counter) and reports a
// gauge of its own, labelled with its run (like the forecast stage's skill),
// and one without (which must not be summed across streams).
type reporter struct {
	stream  string
	batches int
	flushed bool
	fail    bool
}

func (r *reporter) Process(context.Context, tracecast.Batch, tracecast.Emit) error {
	if r.fail {
		return errors.New("bad line")
	}
	r.batches++
	return nil
}

func (r *reporter) Flush(context.Context, tracecast.Emit) error {
	r.flushed = true
	r.batches += 10 // a flush counts too (a parser's last entities)
	return nil
}

func (r *reporter) Metrics(add func(Metric)) {
	add(Metric{Name: "batches_total", Value: float64(r.batches), Counter: true})
	add(Metric{Name: "skill", Labels: []string{"run", r.stream}, Value: float64(r.batches)})
	add(Metric{Name: "last_batches", Value: float64(r.batches)})
}

func scrape(ps *PerStream) map[string]float64 {
	got := map[string]float64{}
	ps.Metrics(func(m Metric) {
		k := m.Name
		if len(m.Labels) > 0 {
			k += fmt.Sprint(m.Labels)
		}
		if _, dup := got[k]; dup {
			panic("metric reported twice: " + k)
		}
		got[k] = m.Value
	})
	return got
}

// Counters of streams that ended, were evicted or dropped stay counted: a
// trace that ends must not take its lines out of lines_total (49950 →
// 88604 → 49998 while two traces ran). Gauges are not summed across
// streams: each run's comes with its run label, kept once it ended.
func TestPerStreamMetricsMonotonic(t *testing.T) {
	ctx := context.Background()
	emit := func(context.Context, tracecast.Batch) error { return nil }
	ps := NewPerStream(2, func(s string) (tracecast.Processor, error) {
		return &reporter{stream: s, fail: s == "bad"}, nil
	}).DropFailedStreams(zerolog.Nop())
	last := 0.0
	check := func(step string, want float64) map[string]float64 {
		t.Helper()
		got := scrape(ps)
		if got["batches_total"] < last {
			t.Fatalf("%s: batches_total went down: %v -> %v", step, last, got["batches_total"])
		}
		last = got["batches_total"]
		if want >= 0 && got["batches_total"] != want {
			t.Fatalf("%s: batches_total %v, want %v (%v)", step, got["batches_total"], want, got)
		}
		return got
	}
	for _, s := range []string{"a", "b", "a", "b", "b"} {
		if err := ps.Process(ctx, tracecast.Batch{Stream: s}, emit); err != nil {
			t.Fatal(err)
		}
	}
	got := check("two open", 5)
	if got["last_batches"] != 3 {
		t.Fatalf("a gauge without a run label was summed over streams: %v, want 3 (the most recently active stream's)", got["last_batches"])
	}
	if err := ps.EndStream(ctx, "a", tracecast.StreamEnd{}, emit); err != nil {
		t.Fatal(err)
	}
	got = check("a ended", 15)
	if got["skill[run a]"] != 12 || got["skill[run b]"] != 3 {
		t.Fatalf("per-run gauges %v: want a's last value (12) kept after its end, b's (3)", got)
	}
	// c evicts b (2 open at most): b's batches stay counted.
	for _, s := range []string{"c", "a"} {
		if err := ps.Process(ctx, tracecast.Batch{Stream: s}, emit); err != nil {
			t.Fatal(err)
		}
	}
	check("b evicted", 17)
	// A dropped stream (stream_errors: drop) is counted.
	if err := ps.Process(ctx, tracecast.Batch{Stream: "bad"}, emit); err != nil {
		t.Fatal(err)
	}
	got = check("bad dropped", 17)
	if got["streams_dropped_total"] != 1 {
		t.Fatalf("streams_dropped_total %v, want 1", got["streams_dropped_total"])
	}
	ps.ResetStream("c")
	check("c reset", 17)
	if err := ps.Flush(ctx, emit); err != nil {
		t.Fatal(err)
	}
	got = check("all flushed", 27)
	if got["open_streams"] != 0 {
		t.Fatalf("open_streams %v after the flush", got["open_streams"])
	}
}

// Per-run gauges are kept for a bounded number of runs: the most recently
// active ones, open or ended.
func TestPerStreamMetricsBounded(t *testing.T) {
	ctx := context.Background()
	emit := func(context.Context, tracecast.Batch) error { return nil }
	ps := NewPerStream(0, func(s string) (tracecast.Processor, error) { return &reporter{stream: s}, nil })
	for i := range 3 * GaugeStreams {
		s := fmt.Sprint("run-", i)
		if err := ps.Process(ctx, tracecast.Batch{Stream: s}, emit); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			if err := ps.EndStream(ctx, s, tracecast.StreamEnd{}, emit); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := scrape(ps)
	runs := 0
	for k := range got {
		if len(k) > 5 && k[:5] == "skill" {
			runs++
		}
	}
	if runs != GaugeStreams {
		t.Fatalf("%d runs' gauges, want %d", runs, GaugeStreams)
	}
	if _, ok := got[fmt.Sprintf("skill[run run-%d]", 3*GaugeStreams-1)]; !ok {
		t.Fatalf("the most recent run's gauge is missing")
	}
	if got["batches_total"] != float64(3*GaugeStreams+10*(3*GaugeStreams/2)) {
		t.Fatalf("batches_total %v", got["batches_total"])
	}
}
