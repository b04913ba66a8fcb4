package ks_test

import (
	"fmt"

	"github.com/tracecast/tracecast/stats/ks"
)

func ExampleTest() {
	// Two windows of an occupancy signal on 0..4 workers. With so few
	// distinct values, R's tie-aware exact p is much smaller than SciPy's
	// (which ignores ties) and the decisions differ.
	prev := ks.HistOf(4, 0, 1, 2, 0, 1, 0, 1, 0, 1, 2, 1, 0)
	next := ks.HistOf(4, 1, 1, 2, 1, 2, 1, 1, 1, 1, 3, 1, 3)
	for _, m := range ks.Methods {
		r := ks.Test(prev, next, m, ks.DefaultAlpha)
		fmt.Printf("%-6s D=%d/%d p=%.4f exact=%-5v hit=%v\n", m, r.DNum, r.DDen, r.P, r.Exact, r.Hit())
	}
	// Output:
	// matlab D=60/144 p=0.1862 exact=false hit=true
	// scipy  D=60/144 p=0.2558 exact=true  hit=true
	// r      D=60/144 p=0.0497 exact=true  hit=false
}

func ExampleSweep() {
	// A signal that alternates between two regimes every 6 samples.
	var signal []int
	for i := 0; i < 48; i++ {
		if (i/6)%2 == 0 {
			signal = append(signal, i%2)
		} else {
			signal = append(signal, 2+i%2)
		}
	}
	for _, r := range ks.Sweep(signal, 3, []int{6, 12, 24}, ks.R, ks.DefaultAlpha) {
		fmt.Printf("w=%2d compared=%d hits=%d hit-rate=%.2f\n", r.Window, r.Compared, r.Hits, r.HitRate)
	}
	// Output:
	// w= 6 compared=7 hits=0 hit-rate=0.00
	// w=12 compared=3 hits=3 hit-rate=1.00
	// w=24 compared=1 hits=1 hit-rate=1.00
}
