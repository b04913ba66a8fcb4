package eiger

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"gonum.org/v1/gonum/mat"
)

// synthetic draws t = 3·n² + 2·log₂ m + noise with an irrelevant column
// r, a constant column c and a column d = n + m/1000 that adds no
// direction (zero variance in PCA).
func synthetic(rows int, sigma float64, seed uint64) ([]string, [][]float64, []float64) {
	rng := rand.New(rand.NewPCG(seed, 1))
	names := []string{"n", "m", "r", "c", "d"}
	x := make([][]float64, rows)
	y := make([]float64, rows)
	for i := range x {
		n := float64(1 + rng.IntN(10))
		m := math.Exp2(float64(1 + rng.IntN(30)))
		r := rng.Float64() * 100
		x[i] = []float64{n, m, r, 7, n + m/1000}
		y[i] = 3*n*n + 2*math.Log2(m) + rng.NormFloat64()*sigma
	}
	return names, x, y
}

func TestSyntheticRecovery(t *testing.T) {
	for _, c := range []struct {
		name  string
		sigma float64
		tol   float64 // on the weights of n² and log₂ m
	}{
		{"exact", 0, 1e-9},
		{"noise 0.5", 0.5, 0.05},
		{"noise 2", 2, 0.15},
	} {
		t.Run(c.name, func(t *testing.T) {
			names, x, y := synthetic(2000, c.sigma, 7)
			md, err := Fit(names, x, y, Options{Threshold: 0.001, Clusters: 1})
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(md.Variables, []string{"n", "m", "r"}) || md.ZeroDirections != 1 {
				t.Fatalf("variables %v, %d zero directions, dropped %v", md.Variables, md.ZeroDirections, md.Dropped)
			}
			if len(md.Dropped) != 2 || md.Dropped[0].Input != "c" || md.Dropped[1].Input != "d" {
				t.Errorf("dropped %v", md.Dropped)
			}
			cl := md.Clusters[0]
			if !slices.Equal(cl.Terms, []string{"1", "n^2", "log2(m)"}) {
				t.Fatalf("terms %v (steps %v)", cl.Terms, cl.Steps)
			}
			if math.Abs(cl.Weights[1]-3) > c.tol || math.Abs(cl.Weights[2]-2) > c.tol || math.Abs(cl.Weights[0]) > 20*c.tol+1e-9 {
				t.Errorf("weights %v", cl.Weights)
			}
			if c.sigma > 0 && math.Abs(cl.RMSE-c.sigma) > 0.1*c.sigma {
				t.Errorf("training RMSE %g, noise %g", cl.RMSE, c.sigma)
			}
			// The same on a model read back from JSON.
			b, err := json.Marshal(md)
			if err != nil {
				t.Fatal(err)
			}
			var back Model
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if err := back.Restore(); err != nil {
				t.Fatal(err)
			}
			p, _, err := back.Predict(map[string]float64{"n": 4, "m": 1024, "r": 50})
			if err != nil || math.Abs(p-(48+20)) > 10*c.tol+1e-9 {
				t.Errorf("predict %g, %v", p, err)
			}
			if _, _, err := back.Predict(map[string]float64{"n": 4}); err == nil {
				t.Error("a missing input predicted")
			}
			// Damaged files are refused, not run.
			for _, damage := range []func(m *Model){
				func(m *Model) { m.Scale = m.Scale[1:] },
				func(m *Model) { m.Clusters[0].Terms[1] = "q^2" }, // not a variable (n^3 is a product term)
				func(m *Model) { m.Clusters[0].Weights = m.Clusters[0].Weights[1:] },
				func(m *Model) { m.Keep[0] = 99 },
				func(m *Model) { m.Scale[0] = 0 },
				func(m *Model) { m.Clusters = nil },
			} {
				var bad Model
				json.Unmarshal(b, &bad)
				damage(&bad)
				if err := bad.Restore(); err == nil {
					t.Error("a damaged model restored")
				}
			}
		})
	}
}

// independentSelect is Algorithm 1 written again from the seed's text,
// sharing nothing with the package's code but Table 1: its own
// regressors, least squares by the normal equations (Cholesky), adjusted
// R² by eq. 3. The package's selection must take the same steps.
func independentSelect(x [][]float64, y []float64, threshold float64) ([]string, []float64) {
	type reg struct {
		name string
		col  []float64
	}
	nv := len(x[0])
	var pool []reg
	fn := []struct {
		name string
		f    func(float64) float64
	}{
		{"^-2", func(v float64) float64 { return math.Pow(v, -2) }},
		{"^-1", func(v float64) float64 { return 1 / v }},
		{"^-0.5", func(v float64) float64 { return math.Pow(v, -0.5) }},
		{"log2", func(v float64) float64 {
			if v <= 0 {
				return math.NaN()
			}
			return math.Log(v) / math.Ln2
		}},
		{"^0.5", math.Sqrt},
		{"", func(v float64) float64 { return v }},
		{"^2", func(v float64) float64 { return math.Pow(v, 2) }},
	}
	ok := func(col []float64) bool {
		for _, v := range col {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		for _, v := range col {
			if v != col[0] {
				return true
			}
		}
		return false
	}
	for _, f := range fn {
		for j := range nv {
			col := make([]float64, len(y))
			for i := range y {
				col[i] = f.f(x[i][j])
			}
			if ok(col) {
				pool = append(pool, reg{name: f.name + "/" + string(rune('a'+j)), col: col})
			}
		}
	}
	for a := range nv {
		for b := a + 1; b < nv; b++ {
			col := make([]float64, len(y))
			for i := range y {
				col[i] = x[i][a] * x[i][b]
			}
			if ok(col) {
				pool = append(pool, reg{name: "*/" + string(rune('a'+a)) + string(rune('a'+b)), col: col})
			}
		}
	}
	n := len(y)
	fit := func(cols [][]float64) ([]float64, float64, bool) {
		p := len(cols) + 1
		xtx := mat.NewSymDense(p, nil)
		xty := mat.NewVecDense(p, nil)
		at := func(i, k int) float64 {
			if k == 0 {
				return 1
			}
			return cols[k-1][i]
		}
		for a := range p {
			for b := a; b < p; b++ {
				s := 0.0
				for i := range n {
					s += at(i, a) * at(i, b)
				}
				xtx.SetSym(a, b, s)
			}
			s := 0.0
			for i := range n {
				s += at(i, a) * y[i]
			}
			xty.SetVec(a, s)
		}
		var ch mat.Cholesky
		if !ch.Factorize(xtx) {
			return nil, 0, false
		}
		var w mat.VecDense
		if err := ch.SolveVecTo(&w, xty); err != nil {
			return nil, 0, false
		}
		mean := 0.0
		for _, v := range y {
			mean += v
		}
		mean /= float64(n)
		rss, tss := 0.0, 0.0
		for i := range n {
			pr := 0.0
			for k := range p {
				pr += w.AtVec(k) * at(i, k)
			}
			rss += (y[i] - pr) * (y[i] - pr)
			tss += (y[i] - mean) * (y[i] - mean)
		}
		r2 := 1 - rss/tss
		return w.RawVector().Data, 1 - (1-r2)*float64(n-1)/float64(n-p), true
	}
	var chosen []string
	var cols [][]float64
	cur := 0.0
	var weights []float64
	for len(pool) > 0 {
		best, bestAdj := -1, math.Inf(-1)
		var bw []float64
		for k, r := range pool {
			w, adj, ok := fit(append(cols[:len(cols):len(cols)], r.col))
			if ok && adj > bestAdj {
				best, bestAdj, bw = k, adj, w
			}
		}
		if best < 0 || bestAdj-cur <= threshold {
			break
		}
		chosen = append(chosen, pool[best].name)
		cols = append(cols, pool[best].col)
		pool = append(pool[:best], pool[best+1:]...)
		cur, weights = bestAdj, bw
	}
	return chosen, weights
}

// competing is a data set where the pool functions compete: 400 rows of
// three inputs, y a sum of four pool functions of them plus noise, drawn
// from seed.
func competing(seed uint64) (x [][]float64, y []float64) {
	rng := rand.New(rand.NewPCG(seed, 2))
	x = make([][]float64, 400)
	y = make([]float64, 400)
	for i := range x {
		a, b, c := 1+rng.Float64()*9, 1+rng.Float64()*99, rng.Float64()*5
		x[i] = []float64{a, b, c}
		y[i] = 4/a + 0.5*math.Sqrt(b) + 0.3*a*c + 2*math.Log2(b) + rng.NormFloat64()*0.3
	}
	return x, y
}

// TestAgainstIndependentAlgorithm1: on data where several regressors
// compete (a sum of four pool functions of three inputs, noise), both
// implementations take the same steps and agree on the weights.
func TestAgainstIndependentAlgorithm1(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		x, y := competing(seed)
		md, err := Fit([]string{"a", "b", "c"}, x, y, Options{Threshold: 1e-4})
		if err != nil {
			t.Fatal(err)
		}
		names, w := independentSelect(x, y, 1e-4)
		cl := md.Clusters[0]
		// The package's term names in the independent implementation's.
		prefix := []string{"^-2", "^-1", "^-0.5", "log2", "^0.5", "", "^2", "*"}
		var got []string
		for _, term := range cl.Terms[1:] {
			tm, err := ParseTerm(term, md.Variables)
			if err != nil {
				t.Fatal(err)
			}
			name := prefix[tm.F] + "/" + string(rune('a'+tm.I))
			if tm.F == Prod {
				name += string(rune('a' + tm.J))
			}
			got = append(got, name)
		}
		if !slices.Equal(got, names) || len(names) < 3 {
			t.Fatalf("seed %d: %v vs independent %v", seed, got, names)
		}
		t.Logf("seed %d: %v", seed, cl.Terms)
		for k := range w {
			if math.Abs(w[k]-cl.Weights[k]) > 1e-6*math.Max(1, math.Abs(w[k])) {
				t.Errorf("seed %d weight %d: %g vs independent %g", seed, k, cl.Weights[k], w[k])
			}
		}
	}
}

func TestPCAMode(t *testing.T) {
	names, x, y := synthetic(500, 0.1, 3)
	md, err := Fit(names, x, y, Options{Threshold: 0.001, PCA: true})
	if err != nil {
		t.Fatal(err)
	}
	// n, m, r, d vary (c is constant); d = n + m/1000 is a fourth input
	// without a direction of its own.
	if !slices.Equal(md.Inputs, []string{"n", "m", "r", "d"}) || md.ZeroDirections != 1 || !slices.Equal(md.Variables, []string{"pc1", "pc2", "pc3"}) {
		t.Fatalf("inputs %v variables %v zero %d variances %v", md.Inputs, md.Variables, md.ZeroDirections, md.Variances)
	}
	if md.Variances[3] > 1e-10*md.Variances[0] {
		t.Errorf("variances %v", md.Variances)
	}
	cl := md.Clusters[0]
	// Scores are centred: only x, x², x*y apply.
	for _, term := range cl.Terms[1:] {
		if _, err := ParseTerm(term, md.Variables); err != nil {
			t.Error(err)
		}
	}
	if cl.R2 == nil || *cl.R2 < 0.95 {
		t.Errorf("PCA model: terms %v R² %v", cl.Terms, cl.R2)
	}
	p, _, err := md.Predict(map[string]float64{"n": 4, "m": 1024, "r": 50, "d": 4 + 1.024})
	if err != nil || math.Abs(p-68) > 0.1*68 {
		t.Errorf("predict %g %v", p, err)
	}
}

func TestClusters(t *testing.T) {
	// Two regimes: small sizes cost 5·s, large ones 2000 + 0.5·s.
	rng := rand.New(rand.NewPCG(9, 9))
	var x [][]float64
	var y []float64
	for range 300 {
		s := 10 + rng.Float64()*40
		x, y = append(x, []float64{s}), append(y, 5*s+rng.NormFloat64()*0.1)
		s = 5000 + rng.Float64()*4000
		x, y = append(x, []float64{s}), append(y, 2000+0.5*s+rng.NormFloat64()*0.1)
	}
	a, err := Fit([]string{"s"}, x, y, Options{Clusters: 2, Threshold: 0.001, Pool: []Func{Lin}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := Fit([]string{"s"}, x, y, Options{Clusters: 2, Threshold: 0.001, Pool: []Func{Lin}})
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if string(ja) != string(jb) {
		t.Error("the same seed gave two models")
	}
	if len(a.Clusters) != 2 || a.Clusters[0].N != 300 || a.Clusters[1].N != 300 {
		t.Fatalf("clusters %+v", a.Clusters)
	}
	for _, c := range []struct{ s, want float64 }{{20, 100}, {6000, 5000}} {
		if p, _, err := a.Predict(map[string]float64{"s": c.s}); err != nil || math.Abs(p-c.want) > 1 {
			t.Errorf("s=%g: %g, %v (want %g)", c.s, p, err, c.want)
		}
	}
	// More clusters than distinct rows: fewer clusters, said so.
	md, err := Fit([]string{"s"}, [][]float64{{1}, {1}, {2}}, []float64{1, 1, 2}, Options{Clusters: 3})
	if err != nil || len(md.Clusters) != 2 || md.Note == "" {
		t.Errorf("%v %+v", err, md)
	}
}

func TestConstantAndDomain(t *testing.T) {
	// A constant target: the mean, no R².
	md, err := Fit([]string{"s"}, [][]float64{{1}, {2}, {3}}, []float64{4, 4, 4}, Options{})
	if err != nil || md.Clusters[0].R2 != nil || md.Clusters[0].Weights[0] != 4 || len(md.Clusters[0].Terms) != 1 {
		t.Errorf("%v %+v", err, md.Clusters)
	}
	// Only x^-1 allowed on s = 1/t: a prediction at s = 0 is undefined.
	x := [][]float64{{1}, {2}, {4}, {8}, {16}}
	y := []float64{1, 0.5, 0.25, 0.125, 0.0625}
	md, err = Fit([]string{"s"}, x, y, Options{Pool: []Func{Inv}})
	if err != nil || !slices.Equal(md.Clusters[0].Terms, []string{"1", "s^-1"}) {
		t.Fatalf("%v %+v", err, md.Clusters)
	}
	if _, _, err := md.Predict(map[string]float64{"s": 0}); err == nil {
		t.Error("s^-1 at 0 predicted")
	}
	// Inputs that cannot be named in terms, and non-finite values.
	if _, err := Fit([]string{"a*b"}, x, y, Options{}); err == nil {
		t.Error("a*b accepted as a name")
	}
	if _, err := Fit([]string{"s"}, [][]float64{{1}, {math.NaN()}}, []float64{1, 2}, Options{}); err == nil {
		t.Error("NaN accepted")
	}
}

func TestPowerLaw(t *testing.T) {
	var s, y []float64
	for _, v := range []float64{1e3, 4e3, 16e3, 64e3, 256e3} {
		for range 3 {
			s, y = append(s, v), append(y, 2e-6*math.Pow(v, 1.5)+7)
		}
	}
	p, err := FitPowerLaw(s, y)
	if err != nil || math.Abs(p.B-1.5) > 1e-6 || math.Abs(p.A-2e-6)/2e-6 > 1e-4 || math.Abs(p.C-7) > 1e-3 {
		t.Errorf("%+v %v", p, err)
	}
	if _, err := FitPowerLaw([]float64{1, 1, 2, 2}, []float64{1, 1, 2, 2}); err == nil {
		t.Error("two sizes fitted")
	}
}

func TestPool(t *testing.T) {
	vars := []string{"Size", "h0_nx"}
	for _, term := range []Term{{F: InvSq}, {F: Inv, I: 1}, {F: InvSqrt}, {F: Log2}, {F: Sqrt}, {F: Lin}, {F: Sq, I: 1}, {F: Prod, I: 0, J: 1}} {
		name := term.Name(vars)
		back, err := ParseTerm(name, vars)
		if err != nil || back != term {
			t.Errorf("%s: %+v %v", name, back, err)
		}
	}
	if _, err := ParsePool("x^2,log2(x),x^3"); err == nil {
		t.Error("x^3 accepted")
	}
	if p, err := ParsePool("x, x*y"); err != nil || !slices.Equal(p, []Func{Lin, Prod}) {
		t.Errorf("%v %v", p, err)
	}
}
