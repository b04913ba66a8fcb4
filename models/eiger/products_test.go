package eiger

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestProducts(t *testing.T) {
	vars := []string{"M", "N", "K"}
	def := DefaultProducts(3, 4)
	names := map[string]bool{}
	for _, tm := range def {
		name := tm.Name(vars)
		if names[name] {
			t.Errorf("%s twice", name)
		}
		names[name] = true
		back, err := ParseTerm(name, vars)
		if err != nil || back.Name(vars) != name {
			t.Errorf("%s: parsed back as %q (%v)", name, back.Name(vars), err)
		}
		// The term's value is its factors' product.
		row := []float64{3, 5, 7}
		want := 1.0
		for _, f := range tm.P[:tm.NP] {
			want *= math.Pow(row[f.V], f.Pow) * math.Pow(math.Log2(row[f.V]), float64(f.Log))
		}
		if got := tm.Eval(row); math.Abs(got-want) > 1e-12*math.Abs(want) {
			t.Errorf("%s at %v: %g, want %g", name, row, got, want)
		}
	}
	for _, want := range []string{"M", "log2(M)", "M^2", "M*N", "M^2*N", "N^3*K", "N*log2(N)", "M*N*K^2", "log2(N)^4", "K^-2", "K^-1", "K^-0.5", "K^0.5", "K^1.5"} {
		if !names[want] {
			t.Errorf("%s not in the default pool", want)
		}
	}
	for _, no := range []string{"M^5", "M^2*N^2*K", "N^2.5*K", "M^-1*N"} {
		if names[no] {
			t.Errorf("%s in the default pool (more than four factors x, log2(x), or a product of a root or an inverse)", no)
		}
	}
	if len(def) != 224 {
		t.Errorf("default pool of 3 variables: %d terms, documented 224", len(def))
	}
	// With inverses as factors, x*x^-1 is constant and x^-1*x^-1 is x^-2.
	inv := Products(1, []Func{Inv, Lin}, 2)
	var got []string
	for _, tm := range inv {
		got = append(got, tm.Name([]string{"x"}))
	}
	if !slices.Equal(got, []string{"x^-1", "x", "x^-2", "x^2"}) {
		t.Errorf("products of x^-1, x: %v", got)
	}
	// Table 1's x*y, x^2 keep their names and values as product terms.
	for _, name := range []string{"M*N", "M^2", "log2(K)", "K^-0.5"} {
		t1, err := ParseTerm(name, vars)
		if err != nil || t1.F == Mono {
			t.Errorf("%s: %+v %v (want Table 1's term)", name, t1, err)
		}
	}
}

func TestParseTermProducts(t *testing.T) {
	vars := []string{"M", "N", "K"}
	for _, c := range []struct{ in, want, err string }{
		{"M^2*N", "M^2*N", ""},
		{"N^3*K", "N^3*K", ""},
		{"N*M^2", "M^2*N", ""},         // any order: the variables' order back
		{"N*N*N*K", "N^3*K", ""},       // powers add up
		{"N*log2(N)", "N*log2(N)", ""}, // a power and a log of one variable
		{"log2(N)^2*K^-1", "log2(N)^2*K^-1", ""},
		{"M^1.5", "M^1.5", ""},
		{"M^0.25", "", "multiple of 0.5"},
		{"M^0", "", "non-zero"},
		{"M*M^-1", "", "constant"},
		{"Q^2", "", "not a power or log2 of a variable"},
		{"log2(M)^0", "", "power of a log2"},
		{"log2(M)^x", "", "power of a log2"},
		{"M^", "", "multiple of 0.5"},
		{"M^NaN", "", "multiple of 0.5"},
		{"", "", "not a power"},
		{"M**N", "", "not a power"},
	} {
		tm, err := ParseTerm(c.in, vars)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%q: %v, want an error with %q", c.in, err, c.err)
		case c.err == "" && (err != nil || tm.Name(vars) != c.want):
			t.Errorf("%q: %q %v, want %q", c.in, tm.Name(vars), err, c.want)
		}
	}
	// Four variables at most.
	if _, err := ParseTerm("a*b*c*d*e", []string{"a", "b", "c", "d", "e"}); err == nil {
		t.Error("a product of five variables accepted")
	}
}

// mlrLike is the kernel of StarPU's mlr example: t = a + b·M²N + c·N³K
// with multiplicative noise, ten tasks of each of 41 combinations.
func mlrLike(seed uint64, noise float64) ([][]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	var x [][]float64
	var y []float64
	for range 41 {
		m, n, k := float64(1+rng.IntN(10)), float64(1+rng.IntN(10)), float64(1+rng.IntN(10))
		for range 10 {
			x = append(x, []float64{m, n, k})
			y = append(y, (0.5+0.003*m*m*n+0.0004*n*n*n*k)*math.Exp(rng.NormFloat64()*noise))
		}
	}
	return x, y
}

func TestHeldOutSelection(t *testing.T) {
	vars := []string{"M", "N", "K"}
	o := Options{Threshold: DefaultThreshold, MaxFactors: 4, Select: SelectHeldOut, Seed: 1}
	// The generating monomials are found, though alone a compromise
	// (M*N^2*K^0.5) beats either: seeds where the pair is the answer.
	for _, seed := range []uint64{1, 2, 3, 5} {
		x, y := mlrLike(seed, 0.1)
		md, err := Fit(vars, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		cl := md.Clusters[0]
		terms := slices.Sorted(slices.Values(cl.Terms[1:]))
		if !slices.Equal(terms, []string{"M^2*N", "N^3*K"}) {
			t.Errorf("seed %d: terms %v (steps %+v)", seed, cl.Terms, cl.Steps)
			continue
		}
		if cl.Steps[0].HeldOutMAPE == nil || !strings.Contains(cl.Steps[0].Term, " + ") {
			t.Errorf("seed %d: steps %+v (want the pair added in one step)", seed, cl.Steps)
		}
		w := map[string]float64{cl.Terms[1]: cl.Weights[1], cl.Terms[2]: cl.Weights[2]}
		if math.Abs(w["M^2*N"]-0.003) > 0.0005 || math.Abs(w["N^3*K"]-0.0004) > 0.00005 {
			t.Errorf("seed %d: weights %v", seed, w)
		}
		// Restored from its terms' names, the model predicts the same.
		back := *md
		if err := back.Restore(); err != nil {
			t.Fatal(err)
		}
		in := map[string]float64{"M": 4, "N": 6, "K": 2}
		p1, _, _ := md.Predict(in)
		p2, _, _ := back.Predict(in)
		if p1 != p2 || !slices.Equal(back.Required(), []string{"M", "N", "K"}) {
			t.Errorf("seed %d: restored %g vs %g, required %v", seed, p2, p1, back.Required())
		}
	}
	// Noise alone: no term enters.
	for seed := uint64(1); seed <= 5; seed++ {
		x, _ := mlrLike(seed, 0)
		rng := rand.New(rand.NewPCG(seed, 99))
		y := make([]float64, len(x))
		for i := range y {
			y[i] = 2 * math.Exp(rng.NormFloat64()*0.3)
		}
		md, err := Fit(vars, x, y, o)
		if err != nil {
			t.Fatal(err)
		}
		if cl := md.Clusters[0]; len(cl.Terms) != 1 {
			t.Errorf("noise, seed %d: terms %v (steps %+v)", seed, cl.Terms, cl.Steps)
		}
	}
	// Two distinct combinations: nothing to hold out, the mean, and why.
	x := [][]float64{{1, 2, 3}, {1, 2, 3}, {2, 2, 3}, {2, 2, 3}}
	md, err := Fit(vars, x, []float64{1, 1.1, 2, 2.1}, o)
	if err != nil {
		t.Fatal(err)
	}
	if cl := md.Clusters[0]; len(cl.Terms) != 1 || !strings.Contains(cl.Note, "2 distinct parameter combinations") {
		t.Errorf("two combinations: %v, note %q", cl.Terms, cl.Note)
	}
	// A law of one variable from four footprints, as a history has.
	size := [][]float64{{16384}, {36864}, {65536}, {102400}}
	yy := []float64{41.9, 141.1, 313.9, 571.3}
	md, err = Fit([]string{"Size"}, size, yy, o)
	if err != nil {
		t.Fatal(err)
	}
	if cl := md.Clusters[0]; len(cl.Terms) != 2 || *cl.R2 < 0.99 {
		t.Errorf("four sizes: %v R² %v", cl.Terms, *cl.R2)
	}
}

func TestFoldByInputsAndDeclared(t *testing.T) {
	x, y := mlrLike(2, 0.1)
	tb := &Table{Source: "mlr.out", Num: map[string][]float64{}, Text: map[string][]string{}, Columns: []string{"Duration", "M", "N", "K"}}
	tb.Num["Duration"] = y
	for j, name := range []string{"M", "N", "K"} {
		col := make([]float64, len(y))
		for i := range y {
			col[i] = x[i][j]
		}
		tb.Num[name] = col
	}
	for i := range y {
		tb.Lines = append(tb.Lines, int64(i+2))
	}
	spec := Spec{Target: "Duration", Folds: 5, FoldByInputs: true, Declared: []string{"M^2*N", "N^3*K"},
		Options: Options{Threshold: DefaultThreshold, MaxFactors: 4, Select: SelectHeldOut, Seed: 1}}
	f, err := FitGroups(tb, spec)
	if err != nil {
		t.Fatal(err)
	}
	g := f.Groups[0]
	v := g.Validation
	if v == nil || !v.ByInputs || v.Folds != 5 || v.Declared == nil || v.Declared.N != len(y) || v.Eiger.N != len(y) {
		t.Fatalf("validation %+v", v)
	}
	if f.MaxFactors != 4 || f.Selection != "held-out" || !slices.Equal(f.Pool, []string{"x", "log2(x)"}) || len(f.PoolSingles) != 5 {
		t.Errorf("file: max factors %d, selection %q, pool %v %v", f.MaxFactors, f.Selection, f.Pool, f.PoolSingles)
	}
	// The declared fit is least squares: the normal equations agree.
	var a [3][3]float64
	var b [3]float64
	for i := range y {
		r := [3]float64{1, x[i][0] * x[i][0] * x[i][1], x[i][1] * x[i][1] * x[i][1] * x[i][2]}
		for p := range 3 {
			b[p] += r[p] * y[i]
			for q := range 3 {
				a[p][q] += r[p] * r[q]
			}
		}
	}
	w := solve3(a, b)
	for k := range 3 {
		if math.Abs(g.Declared.Weights[k]-w[k]) > 1e-9*math.Abs(w[k]) {
			t.Errorf("declared weight %d: %g, normal equations %g", k, g.Declared.Weights[k], w[k])
		}
	}
	// The selection found the declared monomials: the same held-out error.
	if math.Abs(*v.Eiger.MAPE-*v.Declared.MAPE) > 0.5 {
		t.Errorf("held-out MAPE: eiger %.2f%%, declared %.2f%%", *v.Eiger.MAPE, *v.Declared.MAPE)
	}
	// No combination is both trained on and held out: folds by inputs.
	fold, combo, ncombo, k := comboFolds(x, 5, 1)
	if k != 5 || ncombo != 41 {
		t.Fatalf("folds %d, combinations %d", k, ncombo)
	}
	foldOf := map[int]int{}
	for i, c := range combo {
		if f, ok := foldOf[c]; ok && f != fold[i] {
			t.Fatalf("combination %d in folds %d and %d", c, f, fold[i])
		}
		foldOf[c] = fold[i]
	}
	// An undeclared term: reported, not fatal.
	spec.Declared = []string{"Q^2"}
	f, err = FitGroups(tb, spec)
	if err != nil || f.Groups[0].Declared == nil || f.Groups[0].Declared.Error == "" || f.Groups[0].Validation.Declared != nil {
		t.Errorf("bad declared term: %v %+v", err, f.Groups[0].Declared)
	}
}

// solve3 solves a 3×3 system by Cramer's rule.
func solve3(a [3][3]float64, b [3]float64) [3]float64 {
	det := func(m [3][3]float64) float64 {
		return m[0][0]*(m[1][1]*m[2][2]-m[1][2]*m[2][1]) - m[0][1]*(m[1][0]*m[2][2]-m[1][2]*m[2][0]) + m[0][2]*(m[1][0]*m[2][1]-m[1][1]*m[2][0])
	}
	d := det(a)
	var out [3]float64
	for k := range 3 {
		m := a
		for r := range 3 {
			m[r][k] = b[r]
		}
		out[k] = det(m) / d
	}
	return out
}
