package spell

import (
	"math"
	"testing"
)

func TestPriorWithoutData(t *testing.T) {
	m := New()
	for _, x := range []float64{0, 1e-3, 1} {
		d := m.Predict(x, 0)
		for _, u := range []float64{1e-4, 1e-2, 10} {
			want := (x + Min) / (x + Min + u)
			if got := d.Survival(u); math.Abs(got-want) > 1e-12 {
				t.Errorf("elapsed %g: P(R ≥ %g) = %g, want Gott's %g", x, u, got, want)
			}
		}
	}
}

func TestLearnsSpellLengths(t *testing.T) {
	m := New()
	// 1000 spells of 1 ms and 1000 of 100 ms, all in stratum 5.
	for i := range 2000 {
		l := 1e-3
		if i%2 == 1 {
			l = 0.1
		}
		strata := make([]uint16, LandmarksBefore(l))
		for j := range strata {
			strata[j] = 5
		}
		m.Observe(l, strata)
	}
	d := m.Predict(0, 5)
	if p := d.Survival(0.5e-3); math.Abs(p-1) > 0.02 {
		t.Errorf("P(R ≥ 0.5ms) at the start = %g, want ≈ 1", p)
	}
	if p := d.Survival(10e-3); math.Abs(p-0.5) > 0.02 {
		t.Errorf("P(R ≥ 10ms) at the start = %g, want ≈ 0.5", p)
	}
	// Having lasted 2 ms, the spell is one of the long ones.
	d = m.Predict(2e-3, 5)
	if p := d.Survival(50e-3); p < 0.95 {
		t.Errorf("P(R ≥ 50ms | lasted 2ms) = %g, want ≈ 1", p)
	}
	if q := d.Quantile(0.5); q < 0.08 || q > 0.1 {
		t.Errorf("median remaining after 2ms = %g, want ≈ 0.098", q)
	}
	// The residual life of the pooled spells says the same.
	if p := m.Residual(2e-3, 50e-3); p < 0.95 {
		t.Errorf("Residual(2ms, 50ms) = %g", p)
	}
	// An unseen stratum falls back on the pooled spells.
	if p := m.Predict(0, 9).Survival(10e-3); math.Abs(p-0.5) > 0.05 {
		t.Errorf("unseen stratum: P(R ≥ 10ms) = %g, want ≈ 0.5", p)
	}
}

func TestMeanMin(t *testing.T) {
	m := New()
	d := m.Predict(1, 0) // Gott: S(u) = (1+ε)/(1+ε+u)
	c := 0.5
	want := (1 + Min) * math.Log((1+Min+c)/(1+Min))
	if got := d.MeanMin(c); math.Abs(got-want) > 1e-3 {
		t.Errorf("MeanMin(%g) = %g, want %g", c, got, want)
	}
}

func TestStratum(t *testing.T) {
	a := Features{Ready: 0, Idle: 2, Workers: 12}.Stratum()
	b := Features{Ready: 5, Idle: 2, Workers: 12}.Stratum()
	c := Features{Ready: -1, Idle: 2, Workers: 12}.Stratum()
	d := Features{Ready: 0, Idle: 12, Workers: 12}.Stratum()
	e := Features{Ready: 0, Idle: 2, Workers: 12, Waiting: 7}.Stratum()
	f := Features{Ready: 0, Idle: 2, Workers: 12, Waiting: -1}.Stratum()
	if a == b || a == c || a == d || b == c || a == e || a == f || e == f {
		t.Errorf("strata not told apart: %d %d %d %d %d %d", a, b, c, d, e, f)
	}
}

// TestBinOfTable: the table read agrees with the binary search on every
// edge, the floats either side of it and a sweep between.
func TestBinOfTable(t *testing.T) {
	var rs []float64
	for _, e := range binEdges[:numBins] {
		rs = append(rs, e, math.Nextafter(e, 0), math.Nextafter(e, math.Inf(1)))
	}
	for r := 1e-7; r < 1e5; r *= 1.003 {
		rs = append(rs, r)
	}
	rs = append(rs, -1, math.NaN(), math.Inf(1), 1e300)
	for _, r := range rs {
		if got, want := binOf(r), binSearch(r); got != want {
			t.Errorf("binOf(%v) = %d, the edges' search %d", r, got, want)
		}
	}
}

func TestBinOf(t *testing.T) {
	for _, r := range []float64{0, 1e-9, Min * 0.999, Min, Min * 1.2, 1e-3, 0.0123, 1, 99.9, 1e4, 1e6} {
		want := 0
		if r >= Min {
			want = min(1+int(math.Floor(math.Log10(r/Min)*binsPerDecade+1e-12)), numBins-1)
		}
		if got := binOf(r); got != want || r < binEdges[got] || r >= binEdges[got+1] {
			t.Errorf("binOf(%g) = %d, want %d (edges %g, %g)", r, got, want, binEdges[got], binEdges[got+1])
		}
	}
}
