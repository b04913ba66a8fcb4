package energy

import (
	"context"
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
			// Power over the run whatever the unit (without, the stage
			// fails: no energy integrated).
			ps := []tracecast.PowerSample{{T: 0, Node: DefaultNode, Watts: 1}, {T: 0.001, Node: DefaultNode, Watts: 1}, {T: 3000, Node: DefaultNode, Watts: 1}}
			if err := p.Process(ctx, tracecast.Batch{Stream: "p", Items: ps}, nil); err != nil {
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
