package surface

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A known degree-4 surface (in raw w, T) sampled on the paper's grid is
// recovered exactly: every coefficient through evaluation, R² = 1.
func TestFitRecoversKnownSurface(t *testing.T) {
	known := func(w, T float64) float64 {
		u, v := w/50000, T/4000
		return 1 - 0.3*u + 0.2*v - 0.5*u*v + 0.1*u*u*v*v - 0.05*u*u*u*u + 0.07*v*v*v*v - 0.02*u*v*v*v
	}
	var pts []Point
	for w := 1000; w <= 50000; w += 1000 {
		for T := 1000; T <= 4000; T += 200 {
			pts = append(pts, Point{W: float64(w), T: float64(T), HitRate: known(float64(w), float64(T))})
		}
	}
	f, err := FitPoly(pts, 4)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Coef) != 15 || f.RMSE > 1e-12 || f.MaxAbsRes > 1e-11 || math.Abs(f.R2-1) > 1e-12 {
		t.Fatalf("terms %d rmse %g max %g r2 %g", len(f.Coef), f.RMSE, f.MaxAbsRes, f.R2)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200; i++ {
		w, T := 1000+49000*r.Float64(), 1000+3000*r.Float64()
		if d := math.Abs(f.Eval(w, T) - known(w, T)); d > 1e-11 {
			t.Fatalf("(%g,%g): off by %g", w, T, d)
		}
	}
}

// Lower-degree surfaces are recovered too, and a linear one gives an exact
// cut: hit = 1 − w/100000 crosses 0.95 at w = 5000 for every T.
func TestCutOfPlane(t *testing.T) {
	var pts []Point
	for w := 1000; w <= 50000; w += 1000 {
		for T := 1000; T <= 4000; T += 200 {
			pts = append(pts, Point{W: float64(w), T: float64(T), HitRate: 1 - float64(w)/100000})
		}
	}
	f, err := FitPoly(pts, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, T := range []float64{1000, 2600, 4000} {
		c := f.CutAt(T, 0.95, 1000, 50000, 100)
		if c.W != 5000 || c.Status != "crossing" {
			t.Fatalf("cut %+v", c)
		}
	}
	if c := f.CutAt(1000, 0.999, 1000, 50000, 100); c.Status != "below" || c.W != 1000 {
		t.Fatalf("below: %+v", c)
	}
	if c := f.CutAt(1000, 0.4, 1000, 50000, 100); c.Status != "flat" || c.W != 50000 {
		t.Fatalf("flat: %+v", c)
	}
}

// TestCutFittedIsARate: the polynomial overshoots 1 (and undershoots 0);
// the cut's fitted_hit_rate is a rate, clamped to [0, 1].
func TestCutFittedIsARate(t *testing.T) {
	for _, tc := range []struct {
		name        string
		rate        func(w float64) float64
		target      float64
		status      string
		w           int
		fitted, tol float64
	}{
		{"flat above 1", func(w float64) float64 { return 1.1 - w/1e6 }, 0.95, "flat", 50000, 1, 0},
		{"crossing", func(w float64) float64 { return 1.05 - w/100000 }, 0.95, "crossing", 10000, 0.95, 1e-6},
		{"below 0", func(w float64) float64 { return -0.5 - w/1e6 }, 0.95, "below", 1000, 0, 0},
	} {
		var pts []Point
		for w := 1000; w <= 50000; w += 1000 {
			for T := 1000; T <= 4000; T += 200 {
				pts = append(pts, Point{W: float64(w), T: float64(T), HitRate: tc.rate(float64(w))})
			}
		}
		f, err := FitPoly(pts, 4)
		if err != nil {
			t.Fatal(err)
		}
		c := f.CutAt(2000, tc.target, 1000, 50000, 100)
		if c.Status != tc.status || c.W != tc.w || math.Abs(c.Fitted-tc.fitted) > tc.tol || c.Fitted < 0 || c.Fitted > 1 {
			t.Errorf("%s: cut %+v, want %s at %d, fitted_hit_rate %g", tc.name, c, tc.status, tc.w, tc.fitted)
		}
	}
}

// A degree-d surface from fewer than d DAG sizes (one to three traces for
// the default degree 4) or window sizes is refused with the reason and the
// degree the points allow; with that degree the fit stands.
func TestFitRefusesTooFewSizes(t *testing.T) {
	grid := func(ts []float64, nw int) []Point {
		var pts []Point
		for _, T := range ts {
			for k := 1; k <= nw; k++ {
				x := float64(k) / float64(nw)
				pts = append(pts, Point{W: float64(k * 1000), T: T, HitRate: 1 - x*x - T/1e5})
			}
		}
		return pts
	}
	for _, c := range []struct {
		name    string
		pts     []Point
		deg     int
		want    string // "" when the fit stands
		degreeT int
		terms   int
	}{
		{name: "one trace", pts: grid([]float64{1000}, 10), deg: 4,
			want: "a degree-4 surface needs points at 4 or more DAG sizes (its degree in T is at most one below 4); these come from 1 (T ≈ 1000): train on traces of more DAG sizes, or lower the degree (--degree) to 1"},
		{name: "two traces", pts: grid([]float64{1000, 2000}, 10), deg: 4, want: "these come from 2 (T ≈ 1000, 2000)"},
		// A group's DAGs have T to T+25 tasks: one size.
		{name: "three sizes, six traces", pts: grid([]float64{1000, 1013, 2000, 2007, 3000, 3011}, 10), deg: 4, want: "these come from 3 (T ≈ 1000, 2000, 3000): train on traces of more DAG sizes, or lower the degree (--degree) to 3"},
		{name: "three window sizes", pts: grid([]float64{1000, 2000, 3000, 4000, 5000}, 3), deg: 4, want: "a degree-4 surface needs points at 4 or more window sizes; these come from 3"},
		{name: "degree 0", pts: grid([]float64{1000}, 10), deg: 0, want: "the degree must be at least 1"},
		{name: "one trace, degree 1", pts: grid([]float64{1000}, 10), deg: 1, degreeT: 0, terms: 2},
		{name: "three sizes, degree 3", pts: grid([]float64{1000, 2000, 3000}, 10), deg: 3, degreeT: 2, terms: 9},
		{name: "four sizes, degree 4", pts: grid([]float64{1000, 2000, 3000, 4000}, 10), deg: 4, degreeT: 3, terms: 14},
		{name: "five sizes, degree 4", pts: grid([]float64{1000, 2000, 3000, 4000, 5000}, 10), deg: 4, degreeT: 4, terms: 15},
	} {
		t.Run(c.name, func(t *testing.T) {
			f, err := FitPoly(c.pts, c.deg)
			if c.want != "" {
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("err %v\nwant %q", err, c.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if f.DegreeT != c.degreeT || f.DegreeW != c.deg || len(f.Coef) != c.terms {
				t.Errorf("degree in T %d, in w %d, %d terms; want %d, %d, %d", f.DegreeT, f.DegreeW, len(f.Coef), c.degreeT, c.deg, c.terms)
			}
		})
	}
	if _, err := FitPoly(nil, 4); err == nil {
		t.Fatal("no points fitted")
	}
}

// Four DAG-size groups of slightly different T give a cubic in T, not an
// ill-determined quartic.
func TestFitGroupsLimitDegree(t *testing.T) {
	var pts []Point
	for g, T := range []float64{1000, 2000, 3000, 4000} {
		for s := 0; s < 3; s++ {
			for w := 1000; w <= 50000; w += 1000 {
				tt := T + float64(s*7+g)
				pts = append(pts, Point{W: float64(w), T: tt, HitRate: 1 - float64(w)/1e5 - tt/1e5})
			}
		}
	}
	f, err := FitPoly(pts, 4)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range f.Terms {
		if e[1] > 3 {
			t.Fatalf("term %v with 4 T groups", e)
		}
	}
	if f.MaxAbsRes > 1e-12 {
		t.Fatalf("plane not recovered: %g", f.MaxAbsRes)
	}
}

func TestModelWindowInterpolates(t *testing.T) {
	m := &Model{Kind: "tracecast.window-size-model", Version: ModelVersion, Surfaces: []RModel{
		{R: 8, Cuts: []Cut{{T: 1000, W: 10000}, {T: 2000, W: 20000}}},
		{R: 32, Cuts: []Cut{{T: 1000, W: 2000}, {T: 2000, W: 4000}}},
	}}
	dir := t.TempDir()
	b, _ := json.Marshal(m)
	p := filepath.Join(dir, "m.json")
	os.WriteFile(p, b, 0o644)
	m2, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ r, t, w int }{
		{8, 1000, 10000}, {8, 1500, 15000}, {8, 500, 10000}, {8, 9000, 20000},
		{32, 1500, 3000}, {64, 2000, 4000}, {4, 2000, 20000},
		{16, 1000, 6000}, // halfway in log2 R
	} {
		w, err := m2.Window(c.r, c.t)
		if err != nil || w != c.w {
			t.Errorf("Window(%d,%d) = %d, %v; want %d", c.r, c.t, w, err, c.w)
		}
	}
	os.WriteFile(p, []byte(`{"kind":"x","version":1}`), 0o644)
	if _, err := Load(p); err == nil {
		t.Fatal("wrong kind accepted")
	}
}

func TestClassifier(t *testing.T) {
	for _, c := range []struct {
		xs   []int
		want State
	}{
		{[]int{8, 8, 7, 8, 6}, UniformIdle},
		{[]int{0, 1, 0, 2, 0}, UniformComputation},
		{[]int{0, 8, 0, 8, 4}, Patch},
	} {
		k := Classifier{R: 8}
		for _, x := range c.xs {
			k.Add(x)
		}
		if got := k.Result(); got.State != c.want {
			t.Errorf("%v: %+v", c.xs, got)
		}
	}
}
