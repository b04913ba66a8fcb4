package features_test

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/stages/features"
	"github.com/tracecast/tracecast/stages/signal"
)

// readBatches reads a trace's entity batches as the forecast stage gets
// them.
func readBatches(tb testing.TB, path string) []tracecast.Batch {
	tb.Helper()
	var batches []tracecast.Batch
	reg := builtin.Registry()
	component.RegisterSinkValue(reg, "keep", pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if es, ok := b.Items.([]tracecast.Entity); ok {
			b.Items = append([]tracecast.Entity(nil), es...)
			b.Recycle = nil
			batches = append(batches, b)
		}
		return nil
	}))
	spec := pipelines.Spec{Name: "t",
		Sources: []pipelines.Node{{ID: "trace", Type: "file", Options: map[string]any{"path": path},
			Parser: &pipelines.Node{Type: "paje"}}},
		Sinks: []pipelines.Node{{ID: "keep", Type: "keep", Inputs: []string{"trace"}}}}
	cfg, err := spec.Config()
	if err != nil {
		tb.Fatal(err)
	}
	if err := pipelines.Run(context.Background(), cfg, pipelines.RunOptions{Registry: reg, Logger: zerolog.Nop(), Embedded: true}); err != nil {
		tb.Fatal(err)
	}
	return batches
}

// BenchmarkFeed: the feed's work per entity on a StarPU trace repeated
// in time (a long run's steady state), as the forecast stage drives it:
// Add, Sweep to the batch's watermark, apply in time order with a
// context every 64 events.
func BenchmarkFeed(b *testing.B) {
	batches := readBatches(b, "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
	n, span := 0, 0.0
	for _, bt := range batches {
		es := bt.Items.([]tracecast.Entity)
		n += len(es)
		for _, e := range es {
			span = max(span, e.End)
		}
	}
	r := signal.StarPU()
	if err := r.Compile(); err != nil {
		b.Fatal(err)
	}
	f := features.New(r, signal.Idle, 1000, features.Limits{})
	var c fc.Context
	k := 0
	before := func(t float64) {
		if k++; k%64 == 0 {
			f.Context(t, &c)
		}
	}
	var shifted []tracecast.Entity
	rep := 0
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		off := float64(rep) * span
		rep++
		for _, bt := range batches {
			shifted = append(shifted[:0], bt.Items.([]tracecast.Entity)...)
			for i := range shifted {
				shifted[i].Start += off
				shifted[i].End += off
			}
			f.Add(shifted)
			if tw, ok := bt.TypeWatermarks[r.StateType]; ok {
				f.Sweep(features.Watermark(bt, tw) + off)
				f.ApplyAll(before)
			}
		}
	}
	b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "entities/s")
}
