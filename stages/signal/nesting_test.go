package signal

import (
	"fmt"
	"math"
	"testing"

	"github.com/tracecast/tracecast"
)

// deepNest is n PushStates nested on worker A (even levels Sleeping, odd
// GEMM), in the order a parser completes them: innermost first, in
// batches of 256, with the watermark it gives (0: the outermost state is
// open until the last batch).
func deepNest(n int) [][]tracecast.Entity {
	var batches [][]tracecast.Entity
	var b []tracecast.Entity
	for i := n - 1; i >= 0; i-- {
		v := "Sleeping"
		if i%2 == 1 {
			v = "GEMM"
		}
		b = append(b, st("A", float64(i), float64(2*n-i), i, v))
		if len(b) == 256 {
			batches, b = append(batches, b), nil
		}
	}
	return append(batches, b)
}

// nestWork feeds deepNest(n) to a Live and returns its buffer's work and
// the changes it made.
func nestWork(t *testing.T, n int) (int, []float64) {
	t.Helper()
	r := StarPU()
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	l := NewLive(r, Idle, 0)
	var ts []float64
	fn := func(tc float64, x, _ int) { ts = append(ts, tc) }
	for _, b := range deepNest(n) {
		l.Add(b)
		l.Changes(0, fn)
	}
	l.Changes(math.Inf(1), fn)
	c, _ := l.conts.Get("A")
	return c.work, ts
}

// TestLiveDeepNestingScales: nested states arrive innermost first, each
// before every state buffered; inserting each into a sorted slice moved
// the whole buffer (quadratic: 80k levels took 26 s, 2M never ended).
// The buffer's work must grow as n log n: doubling n at most ~2.2 times
// it (quadratic is 4 times).
func TestLiveDeepNestingScales(t *testing.T) {
	n := 1 << 13
	if testing.Short() {
		n = 1 << 11
	}
	w1, ts := nestWork(t, n)
	w2, _ := nestWork(t, 2*n)
	if ratio := float64(w2) / float64(w1); ratio > 2.5 {
		t.Fatalf("buffer work %d for %d nested states, %d for %d: ×%.2f, super-linear", w1, n, w2, 2*n, ratio)
	}
	t.Logf("buffer work %d for %d nested states, %d for %d", w1, n, w2, 2*n)
	// The container's first state, then every level but the outermost
	// (Sleeping: idle, as outside any state) changes the class on the way
	// in and on the way out.
	if len(ts) != 2*n-1 {
		t.Fatalf("%d changes, want %d", len(ts), 2*n-1)
	}
	for i := 1; i < len(ts); i++ {
		if ts[i] < ts[i-1] {
			t.Fatalf("change %d at %v before %v", i, ts[i], ts[i-1])
		}
	}
}

// TestLiveBufferOrder: states arriving in any order are swept in (start,
// imbrication, arrival) order, as the Builder sorts them.
func TestLiveBufferOrder(t *testing.T) {
	var c liveCont
	in := []span{{5, 6, 0, Idle, 0}, {1, 9, 0, Compute, 0}, {3, 4, 1, Comm, 0}, {1, 9, 0, Idle, 0}, {1, 2, 1, Other, 0}, {7, 8, 0, Idle, 0}, {3, 4, 0, Other, 0}}
	for _, s := range in {
		c.insert(s)
	}
	want := []span{{1, 9, 0, Compute, 0}, {1, 9, 0, Idle, 0}, {1, 2, 1, Other, 0}, {3, 4, 0, Other, 0}, {3, 4, 1, Comm, 0}}
	for i, w := range want {
		s, ok := c.next(4)
		if !ok || s != w {
			t.Fatalf("state %d: %v %v, want %v", i, s, ok, w)
		}
	}
	if s, ok := c.next(4); ok {
		t.Fatalf("%v swept before 4", s)
	}
	c.compact()
	for _, w := range []span{{5, 6, 0, Idle, 0}, {7, 8, 0, Idle, 0}} {
		if s, ok := c.next(math.Inf(1)); !ok || s != w {
			t.Fatalf("%v %v, want %v", s, ok, w)
		}
	}
}

// TestLiveKeepsClassRuns: while another container's state open since the
// start holds the watermark, a container's states wait in its buffer.
// Consecutive states in one class are one span there (2M SetStates of
// distinct codelets took 500 MB, one span each); the changes are those of
// the states one by one.
func TestLiveKeepsClassRuns(t *testing.T) {
	r := StarPU()
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	run := func(merge bool) []change {
		l := NewLive(r, Idle, 0)
		l.MergeRuns()
		n := 10000
		for i := range n {
			v := fmt.Sprintf("codelet_%d", i)
			if i == n/2 {
				v = "Sleeping" // one idle state in the middle
			}
			if !merge { // a Pop between states: no two at one level meet
				l.Add([]tracecast.Entity{st("A", float64(2*i), float64(2*i+1), 0, v)})
			} else {
				l.Add([]tracecast.Entity{st("A", float64(i), float64(i+1), 0, v)})
			}
			l.Changes(0, func(float64, int, int) {})
		}
		if c, _ := l.conts.Get("A"); merge && len(c.buf)-c.head+len(c.late) != 3 {
			t.Fatalf("%d spans buffered for 3 class runs", len(c.buf)-c.head+len(c.late))
		}
		var got []change
		l.Add([]tracecast.Entity{st("B", 0, 1e6, 0, "Sleeping")})
		l.Changes(math.Inf(1), func(tc float64, x, _ int) { got = append(got, change{t: tc, to: Class(x)}) })
		return got
	}
	got := run(true)
	want := []change{{t: 0, to: 1}, {t: 0, to: 0}, {t: 0, to: 1}, {t: 5000, to: 2}, {t: 5001, to: 1}, {t: 10000, to: 2}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("changes (t, idle count) %v, want %v", got, want)
	}
	if n := len(run(false)); n != 2*10000 {
		t.Fatalf("%d changes with gaps between the states, want %d", n, 2*10000)
	}
}

// TestBuilderKeepsClassRuns: the offline signal keeps a span per class
// run too, with the same steps.
func TestBuilderKeepsClassRuns(t *testing.T) {
	r := StarPU()
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(r)
	for i := range 1000 {
		b.Add([]tracecast.Entity{st("A", float64(i), float64(i+1), 0, fmt.Sprintf("codelet_%d", i))})
	}
	b.Add([]tracecast.Entity{st("B", 0, 1000, 0, "Sleeping"), st("A", 1000, 1001, 0, "Sleeping")})
	if n := len(b.spans["A"]); n != 2 {
		t.Fatalf("%d spans kept for 2 class runs", n)
	}
	sig, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sig.Steps) != "[{0 [1 1 0 0]} {1000 [2 0 0 0]}]" {
		t.Fatalf("steps %v", sig.Steps)
	}
}

// BenchmarkLiveDeepNesting: 100k PushStates nested on one worker, as the
// parser completes them (innermost first). Quadratic before: 80k levels
// took 26 s in the signal command.
func BenchmarkLiveDeepNesting(b *testing.B) {
	r := StarPU()
	if err := r.Compile(); err != nil {
		b.Fatal(err)
	}
	batches := deepNest(100_000)
	fn := func(float64, int, int) {}
	for b.Loop() {
		l := NewLive(r, Idle, 0)
		for _, es := range batches {
			l.Add(es)
			l.Changes(0, fn)
		}
		l.Changes(math.Inf(1), fn)
	}
}
