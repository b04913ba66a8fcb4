package ks

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestD(t *testing.T) {
	tests := []struct {
		name     string
		R        int
		a, b     []int
		num, den int64
	}{
		{"identical", 8, []int{0, 2, 4, 7, 7}, []int{7, 4, 2, 0, 7}, 0, 25},
		{"constant same value", 8, []int{3, 3, 3}, []int{3, 3, 3, 3, 3}, 0, 15},
		{"disjoint", 5, []int{0, 1, 1}, []int{4, 5}, 6, 6},
		{"disjoint reversed", 5, []int{4, 5}, []int{0, 1, 1}, 6, 6},
		{"binary", 1, []int{0, 0, 0, 1}, []int{0, 1, 1, 1}, 8, 16},
		{"one sample each", 3, []int{1}, []int{2}, 1, 1},
		{"unequal sizes", 4, []int{0, 1, 2, 3, 4}, []int{2, 2}, 4, 10},
		{"ties at the max", 2, []int{0, 2, 2}, []int{1, 2}, 2, 6},
		{"empty a", 3, nil, []int{1}, 0, 0},
		{"empty b", 3, []int{1}, nil, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := HistOf(tt.R, tt.a...), HistOf(tt.R, tt.b...)
			num, den := D(a, b)
			if num != tt.num || den != tt.den {
				t.Errorf("D = %d/%d, want %d/%d", num, den, tt.num, tt.den)
			}
			num2, den2 := D(b, a)
			if num2 != num || den2 != den {
				t.Errorf("D not symmetric: %d/%d vs %d/%d", num, den, num2, den2)
			}
			if want := naiveD(tt.a, tt.b); den != 0 && DFloat(a, b) != want {
				t.Errorf("DFloat = %v, naive ECDF gives %v", DFloat(a, b), want)
			}
		})
	}
}

// naiveD computes D from sorted raw samples by evaluating both ECDFs at every
// pooled value, the textbook way.
func naiveD(a, b []int) float64 {
	if len(a) == 0 || len(b) == 0 {
		return 0
	}
	sa, sb := slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b))
	pooled := slices.Concat(sa, sb)
	var best int64
	n1, n2 := int64(len(a)), int64(len(b))
	for _, v := range pooled {
		c1, _ := slices.BinarySearch(sa, v+1)
		c2, _ := slices.BinarySearch(sb, v+1)
		d := n2*int64(c1) - n1*int64(c2)
		best = max(best, d, -d)
	}
	return float64(best) / float64(n1*n2)
}

func TestDRandomAgainstNaive(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		R := []int{0, 1, 3, 8, 32, 256}[i%6]
		n1, n2 := 1+rng.IntN(60), 1+rng.IntN(60)
		a, b := make([]int, n1), make([]int, n2)
		for j := range a {
			a[j] = rng.IntN(R + 1)
		}
		shift := rng.IntN(2)
		for j := range b {
			b[j] = min(rng.IntN(R+1)+shift, R)
		}
		if got, want := DFloat(HistOf(R, a...), HistOf(R, b...)), naiveD(a, b); got != want {
			t.Fatalf("R=%d a=%v b=%v: D=%v, naive %v", R, a, b, got, want)
		}
	}
}

func TestDDifferentRanges(t *testing.T) {
	a := HistOf(2, 0, 1, 2, 2)
	b := HistOf(6, 1, 5, 6, 6)
	num, den := D(a, b)
	wantNum := int64(4*4 - 4*1) // at value 2: n2·C1 − n1·C2 with C1 = 4, C2 = 1
	if num != wantNum || den != 16 {
		t.Errorf("D = %d/%d, want %d/16", num, den, wantNum)
	}
	if n2, _ := D(b, a); n2 != num {
		t.Errorf("not symmetric")
	}
}

func TestHistOps(t *testing.T) {
	h := NewHist(4)
	if h.R() != 4 || h.N() != 0 {
		t.Fatalf("new hist: R=%d N=%d", h.R(), h.N())
	}
	for _, x := range []int{0, 4, 4, 2} {
		h.Add(x)
	}
	h.AddN(1, 3)
	h.AddN(3, 0)
	steps := []struct {
		op    string
		x     int
		n     int
		count int // Count(x) after the op
	}{
		{"check", 4, 7, 2},
		{"remove", 4, 6, 1},
		{"remove", 1, 5, 2},
		{"add", 1, 6, 3},
		{"check", 3, 6, 0},
		{"check", 99, 6, 0},
		{"check", -1, 6, 0},
	}
	for i, s := range steps {
		switch s.op {
		case "remove":
			h.Remove(s.x)
		case "add":
			h.Add(s.x)
		}
		if h.N() != s.n || h.Count(s.x) != s.count {
			t.Errorf("step %d (%s %d): N=%d Count=%d, want %d, %d", i, s.op, s.x, h.N(), h.Count(s.x), s.n, s.count)
		}
	}
	var c Hist
	c.CopyFrom(h)
	h.Reset()
	if h.N() != 0 || h.Count(1) != 0 || h.R() != 4 {
		t.Errorf("after Reset: N=%d Count(1)=%d R=%d", h.N(), h.Count(1), h.R())
	}
	if c.N() != 6 || c.Count(1) != 3 || c.R() != 4 {
		t.Errorf("copy changed with source: N=%d Count(1)=%d", c.N(), c.Count(1))
	}
	var z Hist // the zero value is an empty histogram over 0..0
	z.Add(0)
	if z.N() != 1 || z.R() != 0 {
		t.Errorf("zero value: N=%d R=%d", z.N(), z.R())
	}
}

func TestHistPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"NewHist negative", func() { NewHist(-1) }},
		{"Add above R", func() { NewHist(3).Add(4) }},
		{"Add negative", func() { NewHist(3).Add(-1) }},
		{"AddN negative count", func() { NewHist(3).AddN(1, -2) }},
		{"AddN above R", func() { NewHist(3).AddN(9, 1) }},
		{"Remove absent", func() { NewHist(3).Remove(2) }},
		{"Remove out of range", func() { NewHist(3).Remove(7) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("no panic")
				}
			}()
			tt.f()
		})
	}
}

// TestNoAllocs pins the allocation-free hot paths: Add, Remove, D, and the
// asymptotic p-values.
func TestNoAllocs(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a, b := NewHist(12), NewHist(12)
	for i := 0; i < 20000; i++ {
		a.Add(rng.IntN(13))
		b.Add(min(rng.IntN(13)+rng.IntN(2), 12))
	}
	small1, small2 := NewHist(12), NewHist(12)
	for i := 0; i < 300; i++ {
		small1.Add(rng.IntN(13))
		small2.Add(rng.IntN(13))
	}
	tests := []struct {
		name string
		f    func()
	}{
		{"Add+Remove", func() { a.Add(5); a.Remove(5) }},
		{"D", func() { D(a, b) }},
		{"Test matlab", func() { Test(a, b, Matlab, DefaultAlpha) }},
		{"Test r asymptotic", func() { Test(a, b, R, DefaultAlpha) }},
		{"Test scipy asymptotic", func() { Test(a, b, SciPy, DefaultAlpha) }},
		{"Test matlab small", func() { Test(small1, small2, Matlab, DefaultAlpha) }},
	}
	for _, tt := range tests {
		if n := testing.AllocsPerRun(100, tt.f); n != 0 {
			t.Errorf("%s: %v allocations per run, want 0", tt.name, n)
		}
	}
}
