package eiger

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stages/tasks"
)

// rTerm is a term name as an R formula term.
func rTerm(t Term, vars []string) string {
	if t.F == Mono {
		return "I(" + t.Name(vars) + ")" // M^2*N, N*log2(N)^2: R's syntax too
	}
	x := vars[t.I]
	switch t.F {
	case InvSq:
		return "I(" + x + "^-2)"
	case Inv:
		return "I(" + x + "^-1)"
	case InvSqrt:
		return "I(" + x + "^-0.5)"
	case Log2:
		return "log2(" + x + ")"
	case Sqrt:
		return "I(" + x + "^0.5)"
	case Lin:
		return x
	case Sq:
		return "I(" + x + "^2)"
	}
	return "I(" + x + "*" + vars[t.J] + ")"
}

// checkWithR fits R's lm on the regressors the model selected, on the same
// data, and compares the coefficients, R² and adjusted R².
func checkWithR(t *testing.T, names []string, x [][]float64, y []float64, md *Model, tol float64) {
	t.Helper()
	rscript, err := exec.LookPath("Rscript")
	if err != nil {
		t.Skip("Rscript not installed (Debian r-base-core): the comparison with R's lm is skipped")
	}
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString(strings.Join(append(append([]string(nil), names...), "target"), ",") + "\n")
	for i := range y {
		for j := range names {
			b.WriteString(strconv.FormatFloat(x[i][j], 'g', -1, 64) + ",")
		}
		b.WriteString(strconv.FormatFloat(y[i], 'g', -1, 64) + "\n")
	}
	data := filepath.Join(dir, "d.csv")
	os.WriteFile(data, []byte(b.String()), 0o644)
	cl := md.Clusters[0]
	rhs := []string{"1"}
	for _, tm := range cl.terms {
		rhs = append(rhs, rTerm(tm, md.Variables))
	}
	script := fmt.Sprintf(`d <- read.csv(%q)
m <- lm(target ~ %s, data = d)
s <- summary(m)
cat(sprintf("%%.17g", c(coef(m), s$r.squared, s$adj.r.squared)), sep = "\n")
`, data, strings.Join(rhs, " + "))
	out, err := exec.Command(rscript, "-e", script).CombinedOutput()
	if err != nil {
		t.Fatalf("Rscript: %v\n%s", err, out)
	}
	var got []float64
	for _, l := range strings.Fields(string(out)) {
		v, err := strconv.ParseFloat(l, 64)
		if err != nil {
			t.Fatalf("R printed %q", out)
		}
		got = append(got, v)
	}
	if len(got) != len(cl.Weights)+2 {
		t.Fatalf("R: %v for %v", got, cl.Terms)
	}
	for k, w := range cl.Weights {
		if math.Abs(got[k]-w) > tol*math.Max(math.Abs(w), 1e-300) {
			t.Errorf("%s: weight %.12g, R %.12g", cl.Terms[k], w, got[k])
		}
	}
	r2, adj := got[len(got)-2], got[len(got)-1]
	if math.Abs(r2-*cl.R2) > 1e-9 || math.Abs(adj-*cl.AdjR2) > 1e-9 {
		t.Errorf("R² %.12g adj %.12g; R: %.12g %.12g", *cl.R2, *cl.AdjR2, r2, adj)
	}
	t.Logf("terms %v: weights %v, adj R² %.9f; R lm: %v", cl.Terms, cl.Weights, *cl.AdjR2, got)
}

// TestAgainstR: the regressors Algorithm 1 selects, refitted by R's lm on
// the same data, give the same weights, R² and adjusted R² — on the
// issue's synthetic generator, on competing regressors, and on the real
// GEMM tasks of the demo StarPU trace.
func TestAgainstR(t *testing.T) {
	t.Run("synthetic", func(t *testing.T) {
		names, x, y := synthetic(2000, 0.5, 7)
		md, err := Fit(names, x, y, Options{Threshold: 0.001})
		if err != nil {
			t.Fatal(err)
		}
		checkWithR(t, names, x, y, md, 1e-9)
	})
	t.Run("competing", func(t *testing.T) {
		x, y := competing(3)
		md, err := Fit([]string{"a", "b", "c"}, x, y, Options{Threshold: 1e-4})
		if err != nil {
			t.Fatal(err)
		}
		// Near-collinear pool functions (√b, log₂ b, b^-0.5): weights are
		// ill-conditioned, both least-squares solvers agree to 1e-6.
		checkWithR(t, []string{"a", "b", "c"}, x, y, md, 1e-6)
	})
	t.Run("held-out products", func(t *testing.T) {
		x, y := mlrLike(2, 0.1)
		vars := []string{"M", "N", "K"}
		md, err := Fit(vars, x, y, Options{Threshold: DefaultThreshold, MaxFactors: 4, Select: SelectHeldOut, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		checkWithR(t, vars, x, y, md, 1e-9)
	})
	t.Run("demo GEMM tasks", func(t *testing.T) {
		f, err := os.Open("../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		o := paje.DefaultOptions()
		o.UserDefined = true
		xr := tasks.Extractor{StateType: "Worker State", IDField: tasks.FieldJobID, PerSecond: 1000}
		names := []string{"Priority", "SubmitOrder", "X", "Y", "Iteration"}
		var x [][]float64
		var y []float64
		if _, err := paje.Read(f, o, func(es []tracecast.Entity) error {
			for i := range es {
				if tk, ok := xr.Task("demo", &es[i]); ok && tk.Codelet == "GEMM" {
					row := make([]float64, len(names))
					for j, n := range names {
						row[j] = tk.Params[n]
					}
					x, y = append(x, row), append(y, tk.DurationS)
				}
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		md, err := Fit(names, x, y, Options{Threshold: 0.001})
		if err != nil {
			t.Fatal(err)
		}
		if len(md.Clusters[0].Terms) < 2 {
			t.Fatalf("no regressor selected: %+v", md.Clusters[0])
		}
		checkWithR(t, names, x, y, md, 1e-7)
	})
}
