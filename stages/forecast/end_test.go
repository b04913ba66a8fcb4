package forecast_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/component"
	fstage "github.com/tracecast/tracecast/stages/forecast"
)

// entityBatches reads path with the paje parser of a file pipeline: its
// entity batches, watermarks included.
func entityBatches(t *testing.T, path string) []tracecast.Batch {
	t.Helper()
	var out []tracecast.Batch
	reg := builtin.Registry()
	component.RegisterSinkValue(reg, "keep", pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if es, ok := b.Items.([]tracecast.Entity); ok {
			b.Items = append([]tracecast.Entity(nil), es...)
			b.Recycle = nil
			out = append(out, b)
		}
		return nil
	}))
	spec := pipelines.Spec{Name: "t",
		Sources: []pipelines.Node{{ID: "trace", Type: "file", Options: map[string]any{"path": path}, Parser: &pipelines.Node{Type: "paje"}}},
		Sinks:   []pipelines.Node{{ID: "keep", Type: "keep", Inputs: []string{"trace"}}}}
	cfg, err := spec.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := pipelines.Run(context.Background(), cfg, pipelines.RunOptions{Registry: reg, Logger: zerolog.Nop(), Embedded: true}); err != nil {
		t.Fatal(err)
	}
	return out
}

// The last skill records of a run say how it ended: "timeout" for a stream
// ended by the source's inactivity timeout (a dead producer), "marker" for
// its own end (its end marker, the end of a file); the rolling ones, while
// the run is open, say nothing (null).
func TestSkillRecordsSayHowTheRunEnded(t *testing.T) {
	batches := entityBatches(t, "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
	half := batches[:len(batches)/2]
	e, ok := builtin.Registry().Lookup(component.KindStage, "forecast")
	if !ok {
		t.Fatal("no forecast stage")
	}
	for _, tc := range []struct {
		name string
		end  func(ctx context.Context, p tracecast.Processor, emit tracecast.Emit) error
		want string
	}{
		{"timeout", func(ctx context.Context, p tracecast.Processor, emit tracecast.Emit) error {
			return p.(tracecast.StreamProcessor).EndStream(ctx, "run", tracecast.StreamEnd{Reason: tracecast.EndTimeout}, emit)
		}, "timeout"},
		{"end marker", func(ctx context.Context, p tracecast.Processor, emit tracecast.Emit) error {
			return p.(tracecast.StreamProcessor).EndStream(ctx, "run", tracecast.StreamEnd{}, emit)
		}, "marker"},
		{"end of file", func(ctx context.Context, p tracecast.Processor, emit tracecast.Emit) error {
			return p.Flush(ctx, emit)
		}, "marker"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := e.NewOptions().(*fstage.StageConfig)
			o.Rules, o.Queries, o.Horizons, o.Every, o.SkillEvery, o.RunID = "starpu", []string{"idle>=25%", "idle>=1"}, []string{"1ms", "10ms"}, "1ms", "20ms", "r"
			c, err := e.Build(component.Env{Logger: zerolog.Nop()}, o)
			if err != nil {
				t.Fatal(err)
			}
			p := c.(tracecast.Processor)
			ctx := context.Background()
			var rolling, final []tracecast.Skill
			keep := func(to *[]tracecast.Skill) tracecast.Emit {
				return func(_ context.Context, b tracecast.Batch) error {
					if ks, ok := b.Items.([]tracecast.Skill); ok {
						*to = append(*to, ks...)
					}
					return nil
				}
			}
			for _, b := range half {
				b.Stream = "run"
				if err := p.Process(ctx, b, keep(&rolling)); err != nil {
					t.Fatal(err)
				}
			}
			if err := tc.end(ctx, p, keep(&final)); err != nil {
				t.Fatal(err)
			}
			if len(rolling) == 0 || len(final) == 0 {
				t.Fatalf("%d rolling skill records, %d at the end", len(rolling), len(final))
			}
			end := func(k tracecast.Skill) any {
				var m map[string]any
				if err := json.Unmarshal(k.AppendJSON(nil), &m); err != nil {
					t.Fatal(err)
				}
				v, ok := m["end"]
				if !ok {
					return "absent"
				}
				return v
			}
			// The last record of each (query, horizon) is the run's final
			// one; those before it (some emitted at the end too) are rolling.
			last := map[string]string{}
			for _, k := range final {
				last[k.Query+" "+fmt.Sprint(k.Horizon)] = k.ID
			}
			if len(last) != 4 {
				t.Fatalf("final skill records for %d (query, horizon), want 4", len(last))
			}
			bad := 0
			for _, k := range append(rolling, final...) {
				if last[k.Query+" "+fmt.Sprint(k.Horizon)] == k.ID {
					if v := end(k); v != tc.want {
						t.Errorf("final skill record %s: end %v, want %v", k.ID, v, tc.want)
					}
				} else if v := end(k); v != nil {
					if bad++; bad == 1 {
						t.Errorf("rolling skill record %s: end %v, want null", k.ID, v)
					}
				}
			}
			if bad > 1 {
				t.Errorf("%d of %d rolling skill records whose end is not null", bad, len(rolling)+len(final)-len(last))
			}
		})
	}
}
