package forecast_test

import (
	"context"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/pipelines/component"
	fstage "github.com/tracecast/tracecast/stages/forecast"
)

// The feature feed holds no forecast back: fed half a StarPU trace's
// batches, the stage issues as many forecasts with the trace's context as
// without (it once waited for the application thread's "Waiting all
// tasks", open until the run drains: every forecast came at the end).
func TestFeaturesHoldNothingBack(t *testing.T) {
	batches := entityBatches(t, "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
	half := batches[:len(batches)/2]
	e, ok := builtin.Registry().Lookup(component.KindStage, "forecast")
	if !ok {
		t.Fatal("no forecast stage")
	}
	issued := func(features bool) int {
		o := e.NewOptions().(*fstage.StageConfig)
		o.Rules, o.Horizons, o.Every, o.RunID, o.Features = "starpu", []string{"10ms"}, "1ms", "r", features
		c, err := e.Build(component.Env{Logger: zerolog.Nop()}, o)
		if err != nil {
			t.Fatal(err)
		}
		p := c.(tracecast.Processor)
		n := 0
		for _, b := range half {
			b.Stream = "run"
			if err := p.Process(context.Background(), b, func(_ context.Context, b tracecast.Batch) error {
				if fs, ok := b.Items.([]tracecast.Forecast); ok {
					n += len(fs)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
		}
		return n
	}
	with, without := issued(true), issued(false)
	if without < 500 || with < without*9/10 {
		t.Fatalf("%d forecasts issued from half the trace with its context, %d without", with, without)
	}
}
