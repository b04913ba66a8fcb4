package ks

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
)

// randomWalk returns n samples of a lazy ±1 random walk reflected into 0..R,
// the shape of an occurrence signal (number of busy workers over time).
func randomWalk(seed uint64, n, R int) []int {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	s := make([]int, n)
	v := R / 2
	for i := range s {
		v += rng.IntN(3) - 1
		v = min(max(v, 0), R)
		s[i] = v
	}
	return s
}

// naiveSweep is the obvious implementation: cut the signal, build each
// window's histogram, test consecutive pairs.
func naiveSweep(signal []int, R int, windows []int, m Method, alpha float64) []SweepResult {
	out := make([]SweepResult, len(windows))
	for i, w := range windows {
		res := SweepResult{Window: w}
		full := len(signal) / w
		res.Samples = len(signal)
		for k := 1; k < full; k++ {
			a := HistOf(R, signal[(k-1)*w:k*w]...)
			b := HistOf(R, signal[k*w:(k+1)*w]...)
			res.Compared++
			if !Test(a, b, m, alpha).Reject {
				res.Hits++
			}
		}
		if res.Compared > 0 {
			res.HitRate = float64(res.Hits) / float64(res.Compared)
		}
		out[i] = res
	}
	return out
}

func TestSweepMatchesNaive(t *testing.T) {
	signal := randomWalk(1, 5003, 12)
	windows := []int{1, 7, 50, 100, 333, 1000, 2500, 2501, 5003, 6000, 50}
	for _, m := range Methods {
		got := Sweep(signal, 12, windows, m, 0.05)
		want := naiveSweep(signal, 12, windows, m, 0.05)
		if len(got) != len(want) {
			t.Fatalf("%s: %d results, want %d", m, len(got), len(want))
		}
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s window %d: %+v, want %+v", m, windows[i], got[i], want[i])
			}
		}
	}
}

func TestSweepSmall(t *testing.T) {
	tests := []struct {
		name    string
		signal  []int
		R       int
		windows []int
		want    []SweepResult
	}{
		{"constant signal: all hits", []int{2, 2, 2, 2, 2, 2, 2}, 3, []int{2, 3},
			[]SweepResult{{Window: 2, Samples: 7, Compared: 2, Hits: 2, HitRate: 1}, {Window: 3, Samples: 7, Compared: 1, Hits: 1, HitRate: 1}}},
		{"one window only", []int{0, 1, 0, 1}, 1, []int{4, 3},
			[]SweepResult{{Window: 4, Samples: 4}, {Window: 3, Samples: 4}}},
		{"window longer than signal", []int{0, 1}, 1, []int{5},
			[]SweepResult{{Window: 5, Samples: 2}}},
		{"empty signal", nil, 1, []int{1}, []SweepResult{{Window: 1}}},
		{"no windows", []int{0, 1}, 1, nil, []SweepResult{}},
		{"regime change every 10", append(make([]int, 10), 5, 5, 5, 5, 5, 5, 5, 5, 5, 5), 5, []int{10},
			[]SweepResult{{Window: 10, Samples: 20, Compared: 1, Hits: 0, HitRate: 0}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Sweep(tt.signal, tt.R, tt.windows, Matlab, 0.05)
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("window %d: %+v, want %+v", tt.windows[i], got[i], tt.want[i])
				}
			}
		})
	}
}

func TestSweepPanics(t *testing.T) {
	tests := []struct {
		name string
		f    func()
	}{
		{"value above R", func() { Sweep([]int{0, 1, 5}, 3, []int{1}, Matlab, 0.05) }},
		{"negative value", func() { Sweep([]int{0, -1}, 3, []int{1}, Matlab, 0.05) }},
		{"zero window", func() { Sweep([]int{0, 1}, 3, []int{0}, Matlab, 0.05) }},
		{"negative R", func() { Sweep([]int{0}, -1, []int{1}, Matlab, 0.05) }},
		{"unknown method", func() { Sweep([]int{0}, 1, []int{1}, Method("x"), 0.05) }},
		{"method in capitals", func() { Sweep([]int{0}, 1, []int{1}, Method("MATLAB"), 0.05) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			tt.f()
		})
	}
}

// TestSweepSciPyShortcut covers the SciPy windows above 10000 samples, where
// Sweep decides some comparisons by Massart's bound instead of summing
// smirnov's series: the decisions must equal Test's.
func TestSweepSciPyShortcut(t *testing.T) {
	signal := randomWalk(7, 70000, 12)
	windows := []int{10001, 12000, 17000}
	got := Sweep(signal, 12, windows, SciPy, 0.05)
	want := naiveSweep(signal, 12, windows, SciPy, 0.05)
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("window %d: %+v, want %+v", windows[i], got[i], want[i])
		}
	}
	// And pair by pair, including alphas where the bound does not decide.
	// Windows of 12000 (n = 6000) with D between 0.02 and 0.24 land in
	// smirnov's branch (2.2 <= n·D² < 370).
	inBranch := 0
	for _, alpha := range []float64{0.05, 0.01, 1e-6, 1e-40} {
		for k := 1; k*12000+12000 <= len(signal); k++ {
			a := HistOf(12, signal[(k-1)*12000:k*12000]...)
			b := HistOf(12, signal[k*12000:(k+1)*12000]...)
			if x := sciPyD(a, b); 6000*x*x >= 2.2 && 6000*x*x < 370 {
				inBranch++
			}
			if sr, tr := sweepReject(a, b, SciPy, alpha), Test(a, b, SciPy, alpha); sr != tr.Reject {
				t.Errorf("alpha=%g pair %d: sweep reject %v, Test %+v", alpha, k, sr, tr)
			}
		}
	}
	if inBranch == 0 {
		t.Error("no pair exercised the smirnov branch; change the signal")
	}
	t.Logf("%d pair tests in the smirnov branch", inBranch)
}

// A hit-rate over no comparison is undefined: Rate is nil (null in the
// records), not the 0 that HitRate holds, which reads as all missed.
func TestSweepRate(t *testing.T) {
	res := Sweep([]int{0, 1, 0, 1, 0, 1, 0, 1}, 1, []int{2, 8}, Matlab, 0.05)
	if r := res[0].Rate(); res[0].Compared == 0 || r == nil || *r != res[0].HitRate {
		t.Errorf("window 2: %+v, rate %v", res[0], r)
	}
	if r := res[1].Rate(); res[1].Compared != 0 || r != nil {
		t.Errorf("window 8 (one window, nothing compared): %+v, rate %v", res[1], r)
	}
}

// TestSweeperSizesLongerThanTheSignal: a window size the signal never
// fills costs no counters (10 000 sizes of R = 100 took 24 MB before), and
// sizes near MaxInt neither overflow nor panic.
func TestSweeperSizesLongerThanTheSignal(t *testing.T) {
	ws := make([]int, 10_000)
	for i := range ws {
		ws[i] = 1_000_000 + i
	}
	ws = append(ws, math.MaxInt-1, math.MaxInt)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	sw := NewSweeper(100, append([]int{10}, ws...), Matlab, 0.05)
	for i := range 1000 {
		sw.Add(i % 3)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 4<<20 {
		t.Errorf("the sweep allocated %d bytes, want < 4 MiB: sizes longer than the signal hold counters", got)
	}
	res := sw.Results()
	if res[0].Compared != 99 || res[0].Samples != 1000 {
		t.Errorf("window 10: %+v", res[0])
	}
	for _, r := range res[1:] {
		if r.Compared != 0 || r.HitRate != 0 {
			t.Fatalf("window %d: %+v", r.Window, r)
		}
	}
}
