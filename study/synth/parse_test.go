package synth_test

import (
	"bytes"
	"compress/gzip"
	"math"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stages/signal"
	"github.com/tracecast/tracecast/study/synth"
)

// The synthetic trace reads like a StarPU one: strict mode, the StarPU rules,
// the right worker count, time span and task count.
func TestTraceParsesStrict(t *testing.T) {
	d, err := synth.NewDAG(synth.DAGParams{Tasks: 1200, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	var raw bytes.Buffer
	zw := gzip.NewWriter(&raw)
	sum, err := synth.WriteTrace(zw, d, synth.TraceParams{Workers: 32, Seed: 3, TransferProb: 0.5, TransferMeanMS: 0.5,
		Codelets: []synth.Codelet{{Name: "GEMM", MeanMS: 20, CV: 0.2, Weight: 1}, {Name: "TRSM", MeanMS: 8, CV: 0.3, Weight: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	zw.Close()
	rules := signal.StarPU()
	if err := rules.Compile(); err != nil {
		t.Fatal(err)
	}
	b := signal.NewBuilder(rules)
	tasks, fetches := 0, 0
	workers := map[string]bool{}
	unit := ""
	o := paje.DefaultOptions()
	o.Name = "synth"
	o.OnTimeUnit = func(u string) { unit = u }
	st, err := paje.Read(&raw, o, func(es []tracecast.Entity) error {
		b.Add(es)
		for _, e := range es {
			switch {
			case e.Nature == tracecast.NatureState && e.Type == "Worker State" && (e.Value == "GEMM" || e.Value == "TRSM") && e.End > e.Start:
				tasks++
			case e.Nature == tracecast.NatureState && e.Value == "FetchingInput":
				fetches++
			case e.Nature == tracecast.NatureContainer && e.Type == "Worker":
				workers[e.Value] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if unit != "ms" {
		t.Errorf("time unit %q, want ms", unit)
	}
	if tasks != 1200 || fetches != sum.Transfers || len(workers) != 32 {
		t.Errorf("tasks %d, fetches %d (want %d), workers %d", tasks, fetches, sum.Transfers, len(workers))
	}
	sig, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if sig.R != 32 {
		t.Errorf("R %d", sig.R)
	}
	if math.Abs(sig.T0()-sum.StartMS) > 1e-6 || sig.End < sum.EndMS-1e-6 || sig.End > sum.EndMS+1 {
		t.Errorf("span [%g, %g], want [%g, %g]", sig.T0(), sig.End, sum.StartMS, sum.EndMS)
	}
	t.Logf("%+v, stats %+v, props %+v", sum, st, d.Props())
}
