package signal

import (
	"math"
	"sort"
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

// workerStates simulates the state stack of StarPU workers running tasks
// the way StarPU 1.4 traces them (Set Scheduling, Progressing, Scheduling,
// Overhead; Push/Pop Sleeping; Set the codelet, twice at the same time) and returns the states in the order a
// parser completes them, each with the watermark the parser gives after
// it (the earliest start of a state still open).
func workerStates(workers, tasks int) (es []tracecast.Entity) {
	type ev struct {
		t  float64
		c  string
		op byte // s(et), p(ush), o (pop)
		v  string
	}
	var evs []ev
	for w := range workers {
		c := string(rune('A' + w))
		t := 0.0
		for k := range tasks {
			d := float64(w+1) / 8
			evs = append(evs, ev{t, c, 's', "Scheduling"}, ev{t + d, c, 's', "Progressing"}, ev{t + 2*d, c, 's', "Scheduling"},
				ev{t + 3*d, c, 's', "Overhead"}, ev{t + 4*d, c, 'p', "Sleeping"}, ev{t + 5*d, c, 'o', ""},
				ev{t + 6*d, c, 's', "GEMM"}, ev{t + 6*d, c, 's', "GEMM"})
			t += 6*d + 1 + float64(k%3)
		}
		evs = append(evs, ev{t, c, 's', "Sleeping"})
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].t < evs[j].t })
	stacks := map[string][]tracecast.Entity{}
	closeTop := func(c string, t float64) {
		s := stacks[c]
		e := s[len(s)-1]
		e.End = t
		stacks[c] = s[:len(s)-1]
		es = append(es, e)
	}
	for _, e := range evs {
		switch e.op {
		case 's':
			for len(stacks[e.c]) > 0 {
				closeTop(e.c, e.t)
			}
			stacks[e.c] = append(stacks[e.c], st(e.c, e.t, 0, 0, e.v))
		case 'p':
			stacks[e.c] = append(stacks[e.c], st(e.c, e.t, 0, len(stacks[e.c]), e.v))
		case 'o':
			closeTop(e.c, e.t)
		}
	}
	for c := range stacks {
		for len(stacks[c]) > 0 {
			closeTop(c, evs[len(evs)-1].t+1)
		}
	}
	return es
}
