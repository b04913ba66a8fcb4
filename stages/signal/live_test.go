package signal

import (
	"math"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// TestLiveMatchesBuild feeds the states of TestStarPUSignal in pieces, with
// watermarks, and checks the samples equal the offline ones.
func TestLiveMatchesBuild(t *testing.T) {
	r := StarPU()
	r.Compile()
	all := []tracecast.Entity{
		st("A", 0, 2, 0, "Sleeping"),
		st("A", 3, 4, 1, "FetchingInput"),
		st("A", 2, 5, 0, "GEMM"),
		st("B", 0, 6, 0, "GEMM"),
		st("A", 5, 8, 0, "Sleeping"),
		st("B", 6, 8, 0, "Overhead"),
	}
	b := NewBuilder(r)
	b.Add(all)
	sig, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	var want []int
	sig.Sample(Idle, 0.5, func(_ int, _ float64, x int) { want = append(want, x) })

	l := NewLive(r, Idle, 0.5)
	var got []int
	collect := func(k int, tk float64, x int) {
		if k != len(got) || tk != float64(k)*0.5 {
			t.Fatalf("sample %d at %v out of order", k, tk)
		}
		got = append(got, x)
	}
	// Completion order, with the watermark the parser would give: the
	// earliest start of a state still open.
	l.Add(all[:1]) // A's Sleeping done; A's GEMM (2) and B's GEMM (0) open
	l.Advance(0, collect)
	l.Add(all[1:3]) // A's GEMM done at 5; B's GEMM still open from 0
	l.Advance(0, collect)
	l.Add(all[3:5]) // B's GEMM done; open: B's Overhead from 6, A's Sleeping from 5
	l.Advance(5, collect)
	if len(got) != 10 {
		t.Fatalf("%d samples final before t=5, want 10", len(got))
	}
	l.Add(all[5:])
	l.Advance(math.Inf(1), collect)
	if len(got) != len(want) {
		t.Fatalf("live %v, offline %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("sample %d: live %d, offline %d (live %v, offline %v)", i, got[i], want[i], got, want)
		}
	}
	if l.R() != 2 {
		t.Errorf("R = %d", l.R())
	}
}

// TestLivePeriodBelowResolution: without a first pass nothing bounds the
// sample count, so a period the trace's times cannot resolve (t_0 + Δ =
// t_0) stops the sampler with an error instead of sampling one instant
// for ever (QA: --period 1e-300 on standard input).
func TestLivePeriodBelowResolution(t *testing.T) {
	r := StarPU()
	r.Compile()
	l := NewLive(r, Idle, 1e-300)
	l.Add([]tracecast.Entity{st("A", 1000, 2000, 0, "Sleeping")})
	n := 0
	l.Advance(math.Inf(1), func(_ int, tk float64, _ int) {
		if n++; n > 1000 {
			t.Fatalf("sample %d at %v: still sampling one instant", n, tk)
		}
	})
	if l.Err() == nil || !strings.Contains(l.Err().Error(), "below the resolution") || n != 1 {
		t.Errorf("%d samples, error %v; want 1 and the resolution error", n, l.Err())
	}
}
