package eiger

import (
	"bytes"
	"math"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stages/tasks"
	"github.com/tracecast/tracecast/study/synth"
)

// TestUnseenSizes: on a synthetic StarPU trace whose task durations follow
// known laws of the tile size N (GEMM ∝ N³, TRSM ∝ N², POTRF ∝ N^1.5,
// lognormal noise of CV 0.15), models fitted on the tasks of sizes ≤ 384
// predict the tasks of the unseen sizes 448 and 512 about as well as
// StarPU's a·size^b + c, and far better than the per-codelet mean (the
// history model, which has no entry for a size it has not seen).
func TestUnseenSizes(t *testing.T) {
	d, err := synth.NewDAG(synth.DAGParams{Tasks: 3000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	sizes := []int{64, 128, 192, 256, 320, 384, 448, 512}
	cs := []synth.Codelet{
		{Name: "GEMM", MeanMS: 4, CV: 0.15, Weight: 3, Sizes: sizes, SizeExp: 3},
		{Name: "TRSM", MeanMS: 2, CV: 0.15, Weight: 1, Sizes: sizes, SizeExp: 2},
		{Name: "POTRF", MeanMS: 1, CV: 0.15, Weight: 0.3, Sizes: sizes, SizeExp: 1.5},
	}
	var trace bytes.Buffer
	if _, err := synth.WriteTrace(&trace, d, synth.TraceParams{Workers: 8, Seed: 1, Codelets: cs}); err != nil {
		t.Fatal(err)
	}
	o := paje.DefaultOptions()
	o.UserDefined = true
	x := tasks.Extractor{StateType: "Worker State", IDField: tasks.FieldJobID, PerSecond: 1000}
	names := []string{"Size", "h0_nx", "GFlop", "Iteration", "SubmitOrder", "X", "Y", "Priority"}
	type set struct {
		x    [][]float64
		y, s []float64
	}
	train, test := map[string]*set{}, map[string]*set{}
	if _, err := paje.Read(&trace, o, func(es []tracecast.Entity) error {
		for i := range es {
			tk, ok := x.Task("synth", &es[i])
			if !ok {
				continue
			}
			m := train
			if tk.Params["h0_nx"] > 384 {
				m = test
			}
			st := m[tk.Codelet]
			if st == nil {
				st = &set{}
				m[tk.Codelet] = st
			}
			row := make([]float64, len(names))
			for j, n := range names {
				row[j] = tk.Params[n]
			}
			st.x, st.y, st.s = append(st.x, row), append(st.y, tk.DurationS), append(st.s, tk.Params["Size"])
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	mape := func(y []float64, pred func(i int) float64) float64 {
		s := 0.0
		for i := range y {
			s += math.Abs(y[i]-pred(i)) / y[i]
		}
		return 100 * s / float64(len(y))
	}
	for _, c := range []string{"GEMM", "TRSM", "POTRF"} {
		tr, te := train[c], test[c]
		md, err := Fit(names, tr.x, tr.y, Options{Threshold: DefaultThreshold})
		if err != nil {
			t.Fatal(err)
		}
		pl, err := FitPowerLaw(tr.s, tr.y)
		if err != nil {
			t.Fatal(err)
		}
		mean := 0.0
		for _, v := range tr.y {
			mean += v
		}
		mean /= float64(len(tr.y))
		eig := mape(te.y, func(i int) float64 {
			in := map[string]float64{}
			for j, n := range names {
				in[n] = te.x[i][j]
			}
			p, _, err := md.Predict(in)
			if err != nil {
				t.Fatal(err)
			}
			return p
		})
		hist := mape(te.y, func(int) float64 { return mean })
		spu := mape(te.y, func(i int) float64 { return pl.Eval(te.s[i]) })
		t.Logf("%s: trained on %d tasks, %d unseen: %s; MAPE eiger %.1f%%, history %.1f%%, StarPU a·size^b+c %.1f%% (b %.3f)",
			c, len(tr.y), len(te.y), md.Clusters[0].Terms, eig, hist, spu, pl.B)
		if eig > 20 || eig > hist/3 || eig > 1.5*spu {
			t.Errorf("%s: eiger %.1f%%, history %.1f%%, StarPU %.1f%%", c, eig, hist, spu)
		}
	}
}
