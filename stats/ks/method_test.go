package ks

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseMethod(t *testing.T) {
	tests := []struct {
		in      string
		want    Method
		wantErr bool
	}{
		{"matlab", Matlab, false},
		{"MATLAB", Matlab, false},
		{" scipy ", SciPy, false},
		{"SciPy", SciPy, false},
		{"r", R, false},
		{"R", R, false},
		{"", "", true},
		{"python", "", true},
		{"ks", "", true},
	}
	for _, tt := range tests {
		got, err := ParseMethod(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseMethod(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
	for _, m := range Methods {
		if got, err := ParseMethod(m.String()); err != nil || got != m {
			t.Errorf("round trip of %q: %q, %v", m, got, err)
		}
	}
}

// sample returns a histogram of n draws from 0..vmax, shifted up by shift
// with probability 1/2.
func sample(rng *rand.Rand, vmax, n int, shift int) *Hist {
	h := NewHist(vmax)
	for i := 0; i < n; i++ {
		v := rng.IntN(vmax + 1)
		if rng.IntN(2) == 0 {
			v = min(v+shift, vmax)
		}
		h.Add(v)
	}
	return h
}

func TestTestBranches(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// equalWithOneMoved builds equal-size samples with D = 1/n, where
	// SciPy's exact formula returns 1.0000000000000002 and it falls back.
	equalWithOneMoved := func(n int) (*Hist, *Hist) {
		a, b := NewHist(8), NewHist(8)
		for i := 0; i < n; i++ {
			a.Add(i % 8)
			b.Add(i % 8)
		}
		b.Remove(0)
		b.Add(8)
		return a, b
	}
	fa, fb := equalWithOneMoved(5)
	tests := []struct {
		name      string
		a, b      *Hist
		m         Method
		wantExact bool
	}{
		{"matlab is asymptotic", sample(rng, 8, 10, 0), sample(rng, 8, 12, 0), Matlab, false},
		{"r exact below 10000", sample(rng, 8, 99, 0), sample(rng, 8, 101, 0), R, true},
		{"r asymptotic at 10000", sample(rng, 8, 100, 0), sample(rng, 8, 100, 0), R, false},
		{"scipy exact at max 10000", sample(rng, 8, 10000, 0), sample(rng, 8, 50, 0), SciPy, true},
		{"scipy asymptotic at max 10001", sample(rng, 8, 10001, 0), sample(rng, 8, 50, 0), SciPy, false},
		{"scipy exact fails, falls back", fa, fb, SciPy, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Test(tt.a, tt.b, tt.m, 0.05)
			if r.Exact != tt.wantExact {
				t.Errorf("Exact = %v, want %v", r.Exact, tt.wantExact)
			}
			if r.Method != tt.m || r.N1 != tt.a.N() || r.N2 != tt.b.N() || r.DDen != int64(r.N1*r.N2) {
				t.Errorf("bad bookkeeping: %+v", r)
			}
			if !(r.P >= 0 && r.P <= 1) || r.Reject != (r.P < 0.05) || r.Hit() == r.Reject {
				t.Errorf("bad p/decision: %+v", r)
			}
		})
	}
}

func TestTestEdgeCases(t *testing.T) {
	a, b := HistOf(3, 1, 2, 3), NewHist(3)
	for _, m := range Methods {
		r := Test(a, b, m, 0.05)
		if !math.IsNaN(r.P) || r.Reject {
			t.Errorf("%s with an empty sample: %+v", m, r)
		}
		if r := Test(a, a, m, 0.05); r.P != 1 || r.Reject || r.DNum != 0 {
			t.Errorf("%s identical samples: %+v", m, r)
		}
	}
	// alpha outside (0, 1] means DefaultAlpha.
	x, y := HistOf(1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 1), HistOf(1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1)
	for _, alpha := range []float64{0, -1, 2, math.NaN()} {
		got := Test(x, y, Matlab, alpha)
		want := Test(x, y, Matlab, DefaultAlpha)
		if got != want {
			t.Errorf("alpha=%v: %+v, want %+v", alpha, got, want)
		}
	}
	if r := Test(x, y, Matlab, 1); !r.Reject {
		t.Errorf("alpha=1 should reject any p < 1: %+v", r)
	}
	defer func() {
		if recover() == nil {
			t.Error("unknown method did not panic")
		}
	}()
	Test(x, y, Method("spss"), 0.05)
}

// TestSymmetry: the two-sided p-value does not depend on the order of the
// samples (up to rounding for R, as in R itself).
func TestSymmetry(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := 0; i < 60; i++ {
		vmax := []int{1, 8, 32}[i%3]
		n1, n2 := 5+rng.IntN(200), 5+rng.IntN(200)
		a, b := sample(rng, vmax, n1, 0), sample(rng, vmax, n2, i%2)
		for _, m := range Methods {
			p, q := Test(a, b, m, 0.05).P, Test(b, a, m, 0.05).P
			// R's exact branch counts lattice paths in doubles beyond 2^53
			// and subtracts lgamma(n1+1) before lgamma(n2+1), so, as in R,
			// ks.test(x, y) and ks.test(y, x) differ in the last digits.
			// (R's own results differ by up to ~1e-14 absolute.)
			tol := 0.0
			if m == R {
				tol = 1e-13
			}
			if math.Abs(p-q) > tol {
				t.Errorf("%s n=%d/%d: p(a,b)=%v p(b,a)=%v", m, n1, n2, p, q)
			}
		}
	}
}

// permutationP is the exact permutation p-value P(D >= d) conditional on
// the pooled multiset, by enumerating every split of the pooled sample.
func permutationP(pooled []int, n1 int, vmax int, dObs float64) float64 {
	n := len(pooled)
	var hits, total float64
	var rec func(i, chosen int, a, b *Hist)
	rec = func(i, chosen int, a, b *Hist) {
		if i == n {
			if chosen == n1 {
				total++
				if DFloat(a, b) >= dObs-1e-12 {
					hits++
				}
			}
			return
		}
		if chosen < n1 {
			a.Add(pooled[i])
			rec(i+1, chosen+1, a, b)
			a.Remove(pooled[i])
		}
		if i-chosen < n-n1 {
			b.Add(pooled[i])
			rec(i+1, chosen, a, b)
			b.Remove(pooled[i])
		}
	}
	rec(0, 0, NewHist(vmax), NewHist(vmax))
	return hits / total
}

// TestExactAgainstPermutations checks the exact branches against brute-force
// enumeration: R's p is the permutation p conditional on ties; SciPy's
// exact p equals it when there are no ties.
func TestExactAgainstPermutations(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := 0; i < 40; i++ {
		n1, n2 := 2+rng.IntN(7), 2+rng.IntN(7)
		ties := i%2 == 0
		vmax := 60
		if ties {
			vmax = 3
		}
		perm := rng.Perm(vmax + 1)
		a, b := NewHist(vmax), NewHist(vmax)
		var pooled []int
		for j := 0; j < n1+n2; j++ {
			v := rng.IntN(vmax + 1)
			if !ties {
				v = perm[j]
			}
			pooled = append(pooled, v)
			if j < n1 {
				a.Add(v)
			} else {
				b.Add(v)
			}
		}
		want := permutationP(pooled, n1, vmax, DFloat(a, b))
		rr := Test(a, b, R, 0.05)
		if !rr.Exact || math.Abs(rr.P-want) > 1e-12 {
			t.Errorf("R exact n=%d/%d ties=%v: p=%v, permutation %v", n1, n2, ties, rr.P, want)
		}
		if !ties {
			rs := Test(a, b, SciPy, 0.05)
			if math.Abs(rs.P-want) > 1e-12 {
				t.Errorf("SciPy exact n=%d/%d: p=%v (exact=%v), permutation %v", n1, n2, rs.P, rs.Exact, want)
			}
		}
	}
}

// TestRejectAtAlpha: a p-value equal to alpha rejects with Matlab, as
// kstest2 decides (H = alpha >= p), and not with SciPy or R (p < alpha).
func TestRejectAtAlpha(t *testing.T) {
	a, b := HistOf(10, 1, 2, 3, 4, 5, 6), HistOf(10, 4, 5, 6, 7, 8, 9, 9)
	for _, m := range []Method{Matlab, SciPy, R} {
		p := Test(a, b, m, 0.5).P
		if !(p > 0 && p < 1) {
			t.Fatalf("%s: p %v", m, p)
		}
		if got, want := Test(a, b, m, p).Reject, m == Matlab; got != want {
			t.Errorf("%s: p = alpha = %v: reject %v, want %v", m, p, got, want)
		}
	}
}

// TestParseFlags: the commands' --method and --alpha, with the flag at
// fault named.
func TestParseFlags(t *testing.T) {
	if m, err := ParseFlags("scipy", 0.01); m != SciPy || err != nil {
		t.Errorf("scipy, 0.01: %v %v", m, err)
	}
	for _, c := range []struct {
		method string
		alpha  float64
		want   string
	}{{"excel", 0.05, "excel"}, {"r", 0, "--alpha 0:"}, {"r", math.NaN(), "--alpha NaN:"}} {
		if _, err := ParseFlags(c.method, c.alpha); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s, %g: error %v, want %q", c.method, c.alpha, err, c.want)
		}
	}
}
