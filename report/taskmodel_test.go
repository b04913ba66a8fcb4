package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/models/eiger"
)

func TestTaskModelText(t *testing.T) {
	r2, adj, mape, neg := 0.5, 0.4, 12.5, -0.2
	f := &eiger.File{Target: "duration_s", Source: "t.csv", GroupBy: []string{"codelet"}, Threshold: 0.01, Clusters: 1, Pool: eiger.PoolNames,
		Groups: []eiger.Group{
			{Name: "GEMM", N: 10, NoTarget: 2, Model: &eiger.Model{Variables: []string{"Size"},
				Clusters: []eiger.Cluster{{N: 10, Terms: []string{"1", "Size^2", "log2(Size)"}, Weights: []float64{0.5, -2e-9, 3},
					R2: &r2, AdjR2: &adj, RMSE: 0.01, MAPE: &mape, Negative: 3}}},
				Validation: &eiger.Validation{Folds: 5, Eiger: eiger.Scores{N: 10, MAPE: &mape, R2: &neg, Negative: 1, Failed: 2},
					History: eiger.Scores{N: 10, MAPE: &mape, R2: &r2}, StarPUNote: "1 distinct sizes: a·size^b + c needs 3"}},
			{Name: "POTRF", Error: "no value of duration_s in this group"},
		}}
	var b bytes.Buffer
	if err := WriteTaskModelText(&b, f); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"duration_s = 0.5 − 2e-09·Size^2 + 3·log2(Size)",
		"2 rows without duration_s",
		"UNUSABLE: predicts a negative duration_s for 3 of its 10 training rows",
		"1 negative predictions; 2 of 10 rows not predictable",
		"worse than the mean",
		"n/a: 1 distinct sizes",
		"POTRF  (n 0)\n  no model: no value of duration_s in this group",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
