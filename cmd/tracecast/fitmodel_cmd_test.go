package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// lwperfCSV writes measurements t = 3·n² + 2·log₂ m + noise with an
// irrelevant column and a constant one.
func lwperfCSV(t *testing.T, dir string) string {
	t.Helper()
	rng := rand.New(rand.NewPCG(11, 12))
	var b strings.Builder
	b.WriteString("app,n,m,junk,const,t\n")
	for range 600 {
		n := 1 + rng.IntN(10)
		m := math.Exp2(float64(1 + rng.IntN(30)))
		fmt.Fprintf(&b, "kern,%d,%g,%g,8,%g\n", n, m, rng.Float64()*50, 3*float64(n*n)+2*math.Log2(m)+rng.NormFloat64()*0.5)
	}
	path := filepath.Join(dir, "lwperf.csv")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestFitModelCLI(t *testing.T) {
	dir := t.TempDir()
	csvPath := lwperfCSV(t, dir)
	model := filepath.Join(dir, "model.json")
	r := run(t, nil, "fit-model", csvPath, "--target", "t", "-o", model)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stdout, "t = ") || !strings.Contains(r.stdout, "·n^2") || !strings.Contains(r.stdout, "·log2(m)") ||
		!strings.Contains(r.stdout, "5-fold cross-validation") {
		t.Errorf("report:\n%s", r.stdout)
	}
	var f struct {
		Target string
		Groups []struct {
			Model struct {
				Variables []string
				Clusters  []struct {
					Terms   []string
					Weights []float64
					N       int
					RMSE    float64
				}
			}
		}
	}
	data, _ := os.ReadFile(model)
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	cl := f.Groups[0].Model.Clusters[0]
	if !slices.Equal(cl.Terms, []string{"1", "n^2", "log2(m)"}) || math.Abs(cl.Weights[1]-3) > 0.01 || math.Abs(cl.Weights[2]-2) > 0.02 {
		t.Errorf("model %+v", cl)
	}
	p := jsonOut(t, run(t, nil, "predict-task", "--model", model, "--param", "n=4", "--param", "m=1024", "--param", "junk=3"))
	approx(t, p, "value", 48+20, 0.3)
	if p["n"] != float64(cl.N) || cl.N == 0 || p["rmse"] != cl.RMSE {
		t.Errorf("n %v, rmse %v: want the cluster's %d and %g", p["n"], p["rmse"], cl.N, cl.RMSE)
	}
	if u, _ := p["unused_params"].([]any); len(u) != 1 || u[0] != "junk" {
		t.Errorf("unused %v", p["unused_params"])
	}
	// Restricted inputs and regressors: n only, linear terms only.
	r = run(t, nil, "fit-model", csvPath, "--target", "t", "--inputs", "n", "--regressors", "x", "--folds", "0")
	if r.code != 0 || !strings.Contains(r.stdout, "·n\n") || strings.Contains(r.stdout, "cross-validation") {
		t.Errorf("exit %d:\n%s%s", r.code, r.stdout, r.stderr)
	}

	// Tasks of the demo trace, per codelet: models, plots, predictions.
	tasks := filepath.Join(dir, "tasks.jsonl")
	if r := run(t, nil, "tasks", demoTraceFile, "-o", tasks); r.code != 0 {
		t.Fatalf("tasks: %s", r.stderr)
	}
	plots := filepath.Join(dir, "plots")
	r = run(t, nil, "fit-model", tasks, "--target", "duration_s", "-o", model, "--plots", plots)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, g := range []string{"GEMM/CPU", "POTRF/CPU", "SYRK/CPU", "TRSM/CPU", "history (mean)", "n/a: 1 distinct sizes"} {
		if !strings.Contains(r.stdout, g) {
			t.Errorf("no %q in\n%s", g, r.stdout)
		}
	}
	for _, ext := range []string{".png", ".svg"} {
		if st, err := os.Stat(filepath.Join(plots, "duration_s-GEMM_CPU"+ext)); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", ext, err)
		}
	}
	p = jsonOut(t, run(t, nil, "predict-task", "--model", model, "--codelet", "GEMM", "--worker-kind", "CPU",
		"--param", "Priority=30", "--param", "SubmitOrder=500", "--param", "X=3", "--param", "Y=1", "--param", "Iteration=2"))
	if v, ok := p["value"].(float64); !ok || v < 0.003 || v > 0.03 {
		t.Errorf("GEMM predicted %v", p)
	}
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"predict-task", "--model", model, "--param", "X=1"}, 2, "give --codelet"},
		{[]string{"predict-task", "--model", model, "--codelet", "NOPE", "--worker-kind", "CPU"}, 1, "no model for codelet=NOPE"},
		{[]string{"predict-task", "--model", csvPath, "--codelet", "GEMM"}, 1, csvPath},
		{[]string{"predict-task", "--model", model, "--codelet", "GEMM", "--worker-kind", "CPU", "--param", "X"}, 2, "NAME=NUMBER"},
	} {
		r := run(t, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, r.code, r.stderr, c.code, c.msg)
		}
	}
}

func TestFitModelCLIErrors(t *testing.T) {
	dir := t.TempDir()
	csvPath := lwperfCSV(t, dir)
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("n,t\n1,2\n2,fast\n3,4\n"), 0o644)
	ragged := filepath.Join(dir, "ragged.csv")
	os.WriteFile(ragged, []byte("n,t\n1,2\n2,3,4\n"), 0o644)
	badJSON := filepath.Join(dir, "bad.jsonl")
	os.WriteFile(badJSON, []byte("{\"n\":1,\"t\":2}\n{\"n\":2,\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"fit-model", csvPath}, 2, "--target is required"},
		{[]string{"fit-model", csvPath, "--target", "t", "--clusters", "0"}, 2, "--clusters"},
		{[]string{"fit-model", csvPath, "--target", "t", "--regressors", "x^3"}, 2, "x^3"},
		{[]string{"fit-model", csvPath, "--target", "nope"}, 1, "no column \"nope\""},
		{[]string{"fit-model", csvPath, "--target", "app"}, 1, "not numeric"},
		{[]string{"fit-model", bad, "--target", "t"}, 1, bad + ":3: column t: \"fast\" is not a number"},
		{[]string{"fit-model", ragged, "--target", "t"}, 1, ragged + ":3:"},
		{[]string{"fit-model", badJSON, "--target", "t"}, 1, badJSON + ":2:"},
		{[]string{"fit-model", csvPath, "--target", "t", "-o", csvPath}, 2, ""},
	} {
		r := run(t, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%v: exit %d %q, want %d %q", c.args, r.code, r.stderr, c.code, c.msg)
		}
	}
}
