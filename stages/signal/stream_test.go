package signal

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// randomTrace makes the states of n containers as a Paje stack makes them
// (nested, a Set replacing the stack now and then), at times on a coarse
// grid so that many changes fall at equal times, in completion order (an
// enclosing state after those inside it), with the parser's watermark
// after each state: the earliest start of a state still open.
func randomTrace(seed uint64, n, perCont int) (es []tracecast.Entity, wm []float64) {
	rng := rand.New(rand.NewPCG(seed, 3))
	values := []string{"Sleeping", "GEMM", "FetchingInput", "Overhead", "Executing", "POTRF"}
	type open struct {
		start float64
		imb   int
		v     string
	}
	type cont struct {
		name  string
		t     float64
		stack []open
		left  int
	}
	cs := make([]*cont, n)
	for i := range cs {
		cs[i] = &cont{name: fmt.Sprintf("w%02d", n-i), t: float64(rng.IntN(5)), left: perCont}
	}
	emit := func(c *cont, o open, end float64) {
		es = append(es, tracecast.Entity{Nature: tracecast.NatureState, Container: c.name, Type: "Worker State",
			Start: o.start, End: end, Imbrication: o.imb, Value: o.v})
		w := math.Inf(1)
		for _, c := range cs {
			if len(c.stack) > 0 {
				w = math.Min(w, c.stack[0].start)
			} else if c.left > 0 {
				w = math.Min(w, c.t)
			}
		}
		wm = append(wm, w)
	}
	for {
		// The container furthest behind acts: the states come out in about
		// time order across containers.
		var c *cont
		for _, x := range cs {
			if (x.left > 0 || len(x.stack) > 0) && (c == nil || x.t < c.t) {
				c = x
			}
		}
		if c == nil {
			return es, wm
		}
		c.t += float64(rng.IntN(3)) * 0.5
		switch r := rng.IntN(10); {
		case c.left > 0 && (len(c.stack) == 0 || r < 4 && len(c.stack) < 3):
			c.stack = append(c.stack, open{c.t, len(c.stack), values[rng.IntN(len(values))]})
			c.left--
		case r < 5 && len(c.stack) > 1 && c.left > 0: // a Set: every open state ends
			for len(c.stack) > 0 {
				o := c.stack[len(c.stack)-1]
				c.stack = c.stack[:len(c.stack)-1]
				emit(c, o, c.t)
			}
		default:
			o := c.stack[len(c.stack)-1]
			c.stack = c.stack[:len(c.stack)-1]
			emit(c, o, c.t)
		}
	}
}

// The changes Live reports are the offline ones: each container's, merged
// by time in container order (a stable sort of them), with each
// container's first state counted when it starts. Read at once, the order
// of equal times is the offline one too (the forecast engine's switch
// counts see it); fed batch by batch, the changes at the watermark's
// instant may come in two sweeps, and the counts after each instant are
// the offline ones.
func TestLiveChangesOrder(t *testing.T) {
	r := StarPU()
	r.Compile()
	for seed := uint64(1); seed <= 20; seed++ {
		es, wm := randomTrace(seed, 1+int(seed%7), 300)
		// Offline: every container's changes, a stable sort by time.
		byCont := map[string][]span{}
		for _, e := range es {
			byCont[e.Container] = append(byCont[e.Container], span{start: e.Start, end: e.End, imb: int32(e.Imbrication), class: r.Classify(e.Value)})
		}
		var names []string
		for n := range byCont {
			names = append(names, n)
		}
		sort.Strings(names)
		var all []change
		for _, n := range names {
			sp := byCont[n]
			first := math.Inf(1)
			for _, s := range sp {
				first = math.Min(first, s.start)
			}
			all = append(all, change{t: first, from: newContainer, to: r.Outside})
			all = containerChanges(sp, r.Outside, all)
		}
		sort.SliceStable(all, func(i, j int) bool { return all[i].t < all[j].t })
		var want []step
		var counts [NumClasses]int
		rr := 0
		for _, ch := range all {
			if ch.from == newContainer {
				rr++
			} else {
				counts[ch.from]--
			}
			counts[ch.to]++
			want = append(want, step{ch.t, counts[Idle], rr})
		}
		for _, batch := range []int{len(es), 64, 7, 1} {
			l := NewLive(r, Idle, 0)
			var got []step
			fn := func(t float64, x, r int) { got = append(got, step{t, x, r}) }
			for i := 0; i < len(es); i += batch {
				j := min(i+batch, len(es))
				l.Add(es[i:j])
				l.Changes(wm[j-1], fn)
			}
			l.Changes(math.Inf(1), fn)
			g, w := got, want
			if batch < len(es) {
				g, w = lastAtEachTime(got), lastAtEachTime(want)
			}
			if fmt.Sprint(g) != fmt.Sprint(w) {
				t.Fatalf("seed %d batch %d: changes\n%v\noffline\n%v", seed, batch, g, w)
			}
		}
	}
}

type step struct {
	t    float64
	x, r int
}

// lastAtEachTime keeps the last step of each instant.
func lastAtEachTime(s []step) []step {
	var out []step
	for i, x := range s {
		if i+1 == len(s) || s[i+1].t != x.t {
			out = append(out, x)
		}
	}
	return out
}

// merge is a stable sort by time of the containers' runs, each in time
// order; a run out of order (states not nested) is sorted too.
func TestLiveMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	for n := range 300 {
		l := &Live{}
		k := 1 + rng.IntN(9)
		for c := range k {
			l.runs = append(l.runs, len(l.changes))
			tm := float64(rng.IntN(4))
			for range rng.IntN(12) {
				tm += float64(rng.IntN(3))
				l.changes = append(l.changes, change{t: tm, from: Class(c % int(NumClasses)), to: Class(rng.IntN(int(NumClasses)))})
			}
		}
		if n%10 == 0 && len(l.changes) > 2 { // one run out of order
			i := rng.IntN(len(l.changes) - 1)
			l.changes[i].t += 5
		}
		want := slices.Clone(l.changes)
		sort.SliceStable(want, func(i, j int) bool { return want[i].t < want[j].t })
		l.merge()
		if fmt.Sprint(l.changes) != fmt.Sprint(want) {
			t.Fatalf("case %d: merged\n%v\nwant\n%v", n, l.changes, want)
		}
	}
}

// A container's buffer gives its states in (start, imbrication) order,
// equal keys in arrival order: the stable sort of what arrived.
func TestLiveInsert(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 4))
	for n := range 200 {
		c := &liveCont{}
		var in []span
		for i := range rng.IntN(40) {
			sp := span{start: float64(rng.IntN(10)), end: float64(i), imb: int32(rng.IntN(3))}
			in = append(in, sp)
			c.insert(sp)
		}
		sort.SliceStable(in, func(i, j int) bool {
			return in[i].start < in[j].start || in[i].start == in[j].start && in[i].imb < in[j].imb
		})
		var out []span
		for {
			s, ok := c.next(math.Inf(1))
			if !ok {
				break
			}
			out = append(out, s)
		}
		if fmt.Sprint(out) != fmt.Sprint(in) {
			t.Fatalf("case %d: buffer\n%v\nstable sort\n%v", n, out, in)
		}
	}
}

// A survey and a sampler make the offline signal (Builder, Period,
// Sample) exactly: R with a container that has no state, t_0, the end,
// Pallipuram et al.'s (2014) period, and every sample, whatever the batches.
func TestSurveyAndSamplerAreBuild(t *testing.T) {
	for seed := uint64(1); seed <= 20; seed++ {
		es, wm := randomTrace(seed, 1+int(seed%6), 200)
		idleOnly := tracecast.Entity{Nature: tracecast.NatureContainer, Type: "Worker", Value: "w-none"}
		all := append([]tracecast.Entity{idleOnly}, es...)
		wm = append([]float64{math.Inf(-1)}, wm...)
		r := StarPU()
		r.Compile()
		b := NewBuilder(r)
		b.Add(all)
		sig, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		for _, class := range []Class{Idle, Compute, Comm} {
			period, why, err := sig.Period(class, 0, 0, 5000, "ms")
			if err != nil {
				t.Fatal(err)
			}
			var want []int
			sig.Sample(class, period, func(_ int, _ float64, x int) { want = append(want, x) })
			for _, batch := range []int{1, 5, 100, len(all)} {
				batches := func(f func(tracecast.Batch)) {
					for i := 0; i < len(all); i += batch {
						j := min(i+batch, len(all))
						f(tracecast.Batch{Items: all[i:j], Watermark: wm[j-1]})
					}
				}
				sv, err := NewSurvey("auto", class)
				if err != nil {
					t.Fatal(err)
				}
				batches(sv.Add)
				sum, err := sv.Finish("random")
				if err != nil {
					t.Fatal(err)
				}
				p, w, err := sum.Period(0, 0, 5000, "ms")
				if err != nil || p != period || w != why || sum.R != sig.R || sum.T0 != sig.T0() || sum.End != sig.End || sum.Late != 0 {
					t.Fatalf("seed %d %s batch %d: survey R %d t0 %g end %g period %g (%s) late %d; offline R %d t0 %g end %g period %g (%s)",
						seed, class, batch, sum.R, sum.T0, sum.End, p, w, sum.Late, sig.R, sig.T0(), sig.End, period, why)
				}
				smp := NewSampler(sum, []Class{class}, period)
				var got []int
				fn := func(i, k int, _ float64, x int) {
					if i != 0 || k != len(got) {
						t.Fatalf("sample %d of class %d, want %d", k, i, len(got))
					}
					got = append(got, x)
				}
				batches(func(b tracecast.Batch) { smp.Add(b, fn) })
				smp.Finish(fn)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("seed %d %s batch %d: %d samples, offline %d\n%v\n%v", seed, class, batch, len(got), len(want), got, want)
				}
			}
		}
	}
}

// A state older than the watermark already swept is counted late (a
// sampler cannot place it any more).
func TestSurveyCountsLateStates(t *testing.T) {
	sv, _ := NewSurvey("starpu", Idle)
	sv.Add(tracecast.Batch{Items: []tracecast.Entity{st("A", 0, 5, 0, "GEMM")}, Watermark: 10})
	sv.Add(tracecast.Batch{Items: []tracecast.Entity{st("B", 2, 3, 0, "GEMM"), st("A", 10, 12, 0, "GEMM")}, Watermark: 12})
	sum, err := sv.Finish("t")
	if err != nil || sum.Late != 1 || sum.R != 2 {
		t.Fatalf("summary %+v, %v: want 1 late state of 2 containers", sum, err)
	}
}

// A SurveySink is the survey of what it is given: R counts a container
// without states.
func TestSurveySink(t *testing.T) {
	s, err := NewSurveySink("auto", Idle)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Summary(); err == nil {
		t.Fatal("a summary before Close")
	}
	s.Write(t.Context(), tracecast.Batch{Stream: "t", Items: []tracecast.Entity{
		{Nature: tracecast.NatureContainer, Type: "Worker", Value: "idle-only"}, st("A", 1, 5, 0, "GEMM")}, Watermark: math.NaN()})
	s.Close(t.Context())
	sum, err := s.Summary()
	if err != nil || sum.R != 2 || sum.T0 != 1 || sum.End != 5 || sum.Rules.Name != "starpu" {
		t.Fatalf("summary %+v, %v", sum, err)
	}
	empty, _ := NewSurveySink("smpi", Idle)
	empty.Close(t.Context())
	if _, err := empty.Summary(); err == nil || !strings.Contains(err.Error(), "no \"MPI_STATE\" states") {
		t.Fatalf("no states: %v", err)
	}
}

// After a survey, states of a container it did not see (the file grew
// between the passes) are left out and counted, so that no sample exceeds
// R (a sweep would panic on it).
func TestSamplerLeavesUnknownContainersOut(t *testing.T) {
	sv, _ := NewSurvey("starpu", Compute)
	first := []tracecast.Entity{st("A", 0, 4, 0, "GEMM")}
	sv.Add(tracecast.Batch{Items: first, Watermark: math.NaN()})
	sum, err := sv.Finish("t")
	if err != nil {
		t.Fatal(err)
	}
	smp := NewSampler(sum, []Class{Compute}, 1)
	var xs []int
	fn := func(_, _ int, _ float64, x int) { xs = append(xs, x) }
	smp.Add(tracecast.Batch{Items: append(first, st("B", 0, 4, 0, "GEMM")), Watermark: math.NaN()}, fn)
	smp.Finish(fn)
	if smp.Dropped() != 1 || fmt.Sprint(xs) != "[1 1 1 1]" {
		t.Fatalf("dropped %d, samples %v; want 1 dropped, [1 1 1 1]", smp.Dropped(), xs)
	}
}
