package predict

import (
	"context"
	"math"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// runs: worker A busy from 0, worker B starting late (t = 7, inside the
// first window), both alternating between a task and Sleeping.
func lateWorkerTrace() []tracecast.Entity {
	var es []tracecast.Entity
	add := func(c string, s, e float64, v string) {
		es = append(es, tracecast.Entity{Nature: tracecast.NatureState, Container: c, Type: "Worker State", Start: s, End: e, Value: v})
	}
	for t := 0.0; t < 200; t += 10 {
		add("A", t, t+6, "GEMM")
		add("A", t+6, t+10, "Sleeping")
	}
	for t := 7.0; t < 200; t += 13 {
		add("B", t, t+9, "TRSM")
		add("B", t+9, t+13, "Sleeping")
	}
	return es
}

func liveVerdicts(t *testing.T, es []tracecast.Entity, step float64, live bool) map[string]tracecast.Verdict {
	t.Helper()
	o := DefaultStageConfig()
	o.Rules, o.Period, o.Window, o.Live, o.TimeUnit = "starpu", tracecast.TraceUnits(1), 20, live, "ms"
	o.Queries = []string{"idle>=50%"}
	p, err := newStage(component.Env{Logger: zerolog.Nop()}, o)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]tracecast.Verdict{}
	emit := func(_ context.Context, b tracecast.Batch) error {
		if vs, ok := b.Items.([]tracecast.Verdict); ok {
			for _, v := range vs {
				got[v.ID] = v
			}
		}
		return nil
	}
	ctx := context.Background()
	// States arrive in start order; the watermark advances by step.
	i := 0
	for w := step; i < len(es); w += step {
		j := i
		for j < len(es) && es[j].Start < w {
			j++
		}
		if err := p.Process(ctx, tracecast.Batch{Stream: "t", Items: es[i:j], Watermark: w}, emit); err != nil {
			t.Fatal(err)
		}
		i = j
	}
	if err := p.Flush(ctx, emit); err != nil {
		t.Fatal(err)
	}
	return got
}

// A worker that starts inside the first window counts, in the live
// sampler too, as idle (no open state) from t_0 on, like the offline
// signal: the first verdict's D is the offline one whatever the batching
// (it was 0.36 live against 0.40 offline on the demo trace at full speed).
func TestLiveVerdictsEqualOffline(t *testing.T) {
	es := lateWorkerTrace()
	// Sort by start, as the sweep wants them; ids are per window.
	sortByStart(es)
	want := liveVerdicts(t, es, math.Inf(1), false)
	if len(want) < 5 {
		t.Fatalf("%d offline verdicts", len(want))
	}
	for _, step := range []float64{1, 3, 50, math.Inf(1)} {
		got := liveVerdicts(t, es, step, true)
		if len(got) != len(want) {
			t.Fatalf("watermark step %g: %d verdicts, offline %d", step, len(got), len(want))
		}
		for id, w := range want {
			g := got[id]
			if g.D != w.D || g.P != w.P || g.Observed != w.Observed || g.Likelihood != w.Likelihood {
				t.Fatalf("watermark step %g, %s: live D %g p %g observed %g likelihood %g; offline D %g p %g observed %g likelihood %g",
					step, id, g.D, g.P, g.Observed, g.Likelihood, w.D, w.P, w.Observed, w.Likelihood)
			}
		}
	}
}

func sortByStart(es []tracecast.Entity) {
	for i := 1; i < len(es); i++ {
		for j := i; j > 0 && es[j].Start < es[j-1].Start; j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}
