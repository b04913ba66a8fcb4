package synth

import (
	"bytes"
	"container/heap"
	"math"
	"strings"
	"testing"
)

// quietBackEnd launches nothing and checks that the simulation calls it in
// time order.
type quietBackEnd struct {
	t     *testing.T
	now   float64
	calls int
}

func (q *quietBackEnd) at(t float64) {
	q.calls++
	if t < q.now {
		q.t.Fatalf("back-end called at %v after %v: not in time order", t, q.now)
	}
	q.now = t
}
func (q *quietBackEnd) Begin(t float64, workers int)     { q.at(t) }
func (q *quietBackEnd) Idle(t float64, w int, idle bool) { q.at(t) }
func (q *quietBackEnd) Counts(t float64, ready, sub int) { q.at(t) }
func (q *quietBackEnd) Advance(t float64) []Launch       { q.at(t); return nil }
func (q *quietBackEnd) Finish(t float64) []Launch        { q.at(t); return nil }

// TestClosedLoopQuietIsWriteTrace: with a back-end that never launches,
// the closed loop writes WriteTrace's trace byte for byte (the baseline of
// every closed-loop comparison is synth's own run), and calls the back-end
// in time order.
func TestClosedLoopQuietIsWriteTrace(t *testing.T) {
	for _, c := range goldenCases() {
		d, err := NewDAG(c.dag)
		if err != nil {
			t.Fatal(err)
		}
		var plain, loop bytes.Buffer
		s0, err := WriteTrace(&plain, d, c.trace)
		if err != nil {
			t.Fatal(err)
		}
		q := &quietBackEnd{t: t, now: math.Inf(-1)}
		s1, err := RunClosedLoop(&loop, d, c.trace, q)
		if err != nil {
			t.Fatal(err)
		}
		if q.calls == 0 {
			t.Errorf("%s: back-end never called", c.name)
		}
		if !bytes.Equal(plain.Bytes(), loop.Bytes()) {
			t.Errorf("%s: the closed loop with no back-end task wrote another trace than WriteTrace (%d and %d bytes)", c.name, loop.Len(), plain.Len())
		}
		if s0 != s1.Summary || s1.Launches != 0 || s1.Held != 0 {
			t.Errorf("%s: summaries %+v and %+v", c.name, s0, s1)
		}
		for i, st := range s1.TaskStarts {
			if !(st >= c.trace.StartMS) {
				t.Fatalf("%s: task %d starts at %v", c.name, i, st)
			}
		}
	}
}

// scripted launches one back-end task of length L on worker w the first
// time the run says it is idle.
type scripted struct {
	w       int
	L       float64
	pending []Launch
	done    bool
}

func (s *scripted) Begin(float64, int)       {}
func (s *scripted) Counts(float64, int, int) {}
func (s *scripted) Idle(t float64, w int, idle bool) {
	if idle && w == s.w && !s.done {
		s.done = true
		s.pending = append(s.pending, Launch{Worker: w, Start: t, End: t + s.L})
	}
}
func (s *scripted) Advance(t float64) []Launch {
	var out []Launch
	for len(s.pending) > 0 && s.pending[0].Start < t-loopEps {
		out, s.pending = append(out, s.pending[0]), s.pending[1:]
	}
	return out
}
func (s *scripted) Finish(t float64) []Launch { return s.Advance(math.Inf(1)) }

// TestClosedLoopByHand: five 10 ms tasks (0 → 1 → {2, 3}, and 4) on two
// workers, runtime states of 1 µs, the DAG released at 100 ms. Tasks 0 and
// 4 run at 100.005–110.005; both workers are free at 110.008; task 1 goes
// to CPU0 (110.011–120.011) and CPU1 sleeps from 110.008. A back-end task
// of 15 ms launched there holds CPU1 until 125.008. At 120.014 tasks 2 and
// 3 are ready: 2 goes to CPU0, free (120.017); 3 to CPU1, which the primary
// takes back at 120.014 but which is free only at 125.008: Progressing,
// Scheduling, Overhead, push, pop, and task 3 starts at 125.013 instead of
// 120.019 (4.994 ms late); the makespan (first task start to last task
// end) goes from 30.014 to 35.008 ms.
func TestClosedLoopByHand(t *testing.T) {
	d := &DAG{Level: []int32{0, 1, 2, 2, 0}, Children: [][]int32{{1}, {2, 3}, nil, nil, nil}, NParents: []int32{0, 1, 1, 1, 0}, Edges: 3}
	p := TraceParams{Workers: 2, Seed: 1, Codelets: []Codelet{{Name: "t", MeanMS: 10, Weight: 1}}, OverheadMS: 0.001, StartMS: 100}
	var base, loop bytes.Buffer
	b, err := RunClosedLoop(&base, d, p, &scripted{w: -1})
	if err != nil {
		t.Fatal(err)
	}
	s, err := RunClosedLoop(&loop, d, p, &scripted{w: 1, L: 15})
	if err != nil {
		t.Fatal(err)
	}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s: %.9f, want %.9f", what, got, want)
		}
	}
	for i, want := range []float64{100.005, 110.011, 120.017, 120.019, 100.005} {
		near("task start without the back-end", b.TaskStarts[i], want)
	}
	for i, want := range []float64{100.005, 110.011, 120.017, 125.013, 100.005} {
		near("task start with it", s.TaskStarts[i], want)
	}
	near("makespan without", b.MakespanMS, 30.014)
	near("makespan with", s.MakespanMS, 35.008)
	near("back-end time", s.BackEndMS, 15)
	if s.Launches != 1 || s.Held != 1 || b.Launches != 0 || b.Held != 0 {
		t.Errorf("launches %d held %d (without: %d %d)", s.Launches, s.Held, b.Launches, b.Held)
	}
	// CPU1's lines: the back-end task replaces its going to sleep, and the
	// runtime's states resume when it ends.
	var w1 []string
	for _, l := range strings.Split(loop.String(), "\n") {
		if strings.HasPrefix(l, "6\tBackfill") || strings.HasPrefix(l, "10\t1") && strings.Contains(l, "\tw1\t") && l[3:6] >= "110" {
			w1 = append(w1, l)
		}
	}
	want := []string{
		"6\tBackfill\tWS\tBackfill\t\"0.600000 0.600000 0.600000\" ",
		"10\t110.008000000\tw1\tWS\t\"Backfill\"",
		"10\t125.008000000\tw1\tWS\t\"P\"",
		"10\t125.009000000\tw1\tWS\t\"Sc\"",
		"10\t125.010000000\tw1\tWS\t\"B\"",
		"10\t125.013000000\tw1\tWS\t\"t\"",
	}
	got := strings.Join(w1, "\n")
	for _, l := range want {
		if !strings.Contains(got, l) {
			t.Errorf("CPU1 has no line %q; its lines:\n%s", l, got)
		}
	}
	if strings.Contains(got, "10\t110.009000000\tw1") || strings.Contains(got, "10\t110.010000000\tw1") {
		t.Errorf("CPU1 still goes to sleep under its back-end task:\n%s", got)
	}
}

// TestClaimPrefersFree: a ready task goes to the lowest-numbered free
// worker; a worker running a back-end task only when none is free, the
// one whose task ends first, and the task starts when it ends.
func TestClaimPrefersFree(t *testing.T) {
	inf := math.Inf(-1)
	for _, c := range []struct {
		name  string
		idle  []int32
		bfEnd []float64
		now   float64
		w     int
		start float64
	}{
		{"free over a lower held one", []int32{0, 1, 2}, []float64{20, inf, 5}, 10, 1, 10},
		{"lowest free", []int32{2, 1}, []float64{inf, 3, 9}, 10, 1, 10},
		{"a task ending now is free", []int32{0, 1}, []float64{10, 8}, 10, 0, 10},
		{"none free: the first to end", []int32{0, 1, 2}, []float64{30, 12, 12}, 10, 1, 12},
	} {
		q := &quietBackEnd{t: t, now: inf}
		l := newLoopState(q, len(c.bfEnd), 1, 0)
		copy(l.bfEnd, c.bfEnd)
		idle := intHeap(append([]int32(nil), c.idle...))
		heap.Init(&idle)
		w, start := l.claim(&idle, c.now)
		if w != c.w || start != c.start || idle.Len() != len(c.idle)-1 {
			t.Errorf("%s: worker %d from %v, want %d from %v", c.name, w, start, c.w, c.start)
		}
	}
}
