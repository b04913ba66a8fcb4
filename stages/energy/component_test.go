package energy

import (
	"context"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// TestStageTimeUnit: the stage reads the trace's times in its time_unit
// option, else in the unit the paje parser sent with the entities (given
// or detected from the header), else ms with the StarPU rules.
func TestStageTimeUnit(t *testing.T) {
	for _, tc := range []struct {
		name       string
		option     string
		meta       map[string]string
		wantEndSec float64
	}{
		{"the parser's unit", "", map[string]string{"time_unit": "s"}, 2000},
		{"the parser's milliseconds", "", map[string]string{"time_unit": "ms"}, 2},
		{"the option over the parser's", "us", map[string]string{"time_unit": "s"}, 0.002},
		{"nothing said: ms for StarPU", "", nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultStageConfig()
			o.TimeUnit, o.Result = tc.option, true
			p, err := newStage(component.Env{Logger: zerolog.Nop()}, o)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			ents := []tracecast.Entity{
				{Nature: tracecast.NatureContainer, Container: "0", Type: "Worker", Value: "CPU0", End: 2000},
				{Nature: tracecast.NatureState, Container: "CPU0", Type: "Worker State", Start: 0, End: 2000, Value: "GEMM"},
			}
			if err := p.Process(ctx, tracecast.Batch{Stream: "t", Items: ents, Meta: tc.meta}, nil); err != nil {
				t.Fatal(err)
			}
			var res *Result
			if err := p.Flush(ctx, func(_ context.Context, b tracecast.Batch) error {
				if r, ok := b.Items.([]*Result); ok {
					res = r[0]
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			tl := res.Timelines[DefaultNode]
			if tl == nil || tl.End != tc.wantEndSec {
				t.Fatalf("timeline %+v, want the run to end at %g s", tl, tc.wantEndSec)
			}
		})
	}
}

// TestStageMaxSamples: the samples held until the end of input are
// bounded; past max_samples the run fails saying so (a 3 GB Kwollect
// document was all held), and a stream within it is integrated whole.
func TestStageMaxSamples(t *testing.T) {
	o := DefaultStageConfig()
	o.MaxSamples = 10
	if err := o.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := newStage(component.Env{Logger: zerolog.Nop()}, o)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(n int) tracecast.Batch {
		ss := make([]tracecast.PowerSample, n)
		for i := range ss {
			ss[i] = tracecast.PowerSample{T: float64(i), Node: DefaultNode, Watts: 100}
		}
		return tracecast.Batch{Stream: "p", Items: ss}
	}
	ctx := context.Background()
	if err := p.Process(ctx, batch(6), nil); err != nil {
		t.Fatal(err)
	}
	if err := p.Process(ctx, batch(4), nil); err != nil {
		t.Fatalf("10 samples of at most 10: %v", err)
	}
	if err := p.Process(ctx, batch(1), nil); err == nil || !strings.Contains(err.Error(), "more than 10 power samples (max_samples)") {
		t.Fatalf("the 11th sample: %v", err)
	}
	o.MaxSamples = 0
	if err := o.Validate(); err == nil || !strings.Contains(err.Error(), "max_samples: must be positive") {
		t.Fatalf("max_samples 0: %v", err)
	}
}
