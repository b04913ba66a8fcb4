package features_test

import (
	"math"
	"testing"

	"github.com/tracecast/tracecast"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/stages/features"
	"github.com/tracecast/tracecast/stages/signal"
)

func state(c, ty string, start, end float64, v string) tracecast.Entity {
	return tracecast.Entity{Nature: tracecast.NatureState, Container: c, Type: ty, Start: start, End: end, Value: v}
}

func variable(c, ty string, start, end, n float64) tracecast.Entity {
	return tracecast.Entity{Nature: tracecast.NatureVariable, Container: c, Type: ty, Start: start, End: end, Number: n}
}

func newFeed(t *testing.T) *features.Feed {
	t.Helper()
	r := signal.StarPU()
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	return features.New(r, signal.Idle, 1, features.Limits{})
}

// The context at t is the trace up to t: a state's duration is learnt at
// its end (a state arrives complete), a count at the end of its piece (the
// value before its last change), states from their start.
func TestContextIsCausal(t *testing.T) {
	f := newFeed(t)
	f.Add([]tracecast.Entity{
		state("W0", "Worker State", 0, 10, "GEMM"),
		state("W0", "Worker State", 10, 30, "GEMM"),
		state("W1", "Worker State", 0, 4, "Scheduling"),
		state("W1", "Worker State", 4, 40, "Sleeping"),
		state("W2", "Worker State", 2, 40, "FetchingInput"),
		variable("sched", features.ReadyVariable, 0, 2, 1),
		variable("sched", features.ReadyVariable, 2, 6, 3),
		variable("sched", features.ReadyVariable, 6, 40, 0),
		variable("sched", features.SubmittedVariable, 0, 3, 4),
		variable("sched", features.SubmittedVariable, 3, 40, 5),
		state("UT", features.UserThreadType, 1, 2, features.SubmittingState),
		state("UT", features.UserThreadType, 18, 21, features.SubmittingState),
		state("UT", features.UserThreadType, 21, 40, "Waiting all tasks"),
	})
	f.Sweep(100)
	var c fc.Context
	at := func(t float64) {
		f.ApplyThrough(t, nil)
		f.Context(t, &c)
	}
	at(1)
	if !math.IsNaN(c.Ready) || !math.IsNaN(c.Submitted) {
		t.Fatalf("at 1 no count's piece has ended: %+v", c)
	}
	at(5)
	if c.Ready != 1 || c.Submitted != 4 || c.SinceSubmit != 3 || c.Comm != 1 {
		t.Fatalf("at 5: %+v", c)
	}
	if len(c.Busy) != 1 || !math.IsInf(c.Busy[0], 1) {
		t.Fatalf("at 5 GEMM has never ended: busy %v, want [+Inf]", c.Busy)
	}
	if len(c.Idle) != 1 || c.Idle[0].Age != 5 || !math.IsNaN(c.Idle[0].Remaining) {
		t.Fatalf("at 5 W1 idle for 5 s in Sleeping, never ended: %+v", c.Idle)
	}
	at(12)
	if c.Ready != 3 || len(c.Busy) != 1 || c.Busy[0] != 8 {
		t.Fatalf("at 12 (a GEMM of 10 s ended at 10, the next began at 10): %+v", c)
	}
	at(20)
	if c.SinceSubmit != 18 {
		t.Fatalf("at 20 a submission began, to end at 21: since the last one %v, want 18", c.SinceSubmit)
	}
	at(25)
	if c.SinceSubmit != 4 {
		t.Fatalf("at 25: %+v", c)
	}
	// Past the mean, the remaining time grows with the age.
	if c.Busy[0] != 0.25*15 {
		t.Fatalf("at 25 a GEMM of age 15 (mean 10): remaining %v", c.Busy[0])
	}
}

// A feed that reaches its limit drops entities, counts them and goes on.
func TestFeedBounded(t *testing.T) {
	r := signal.StarPU()
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	f := features.New(r, signal.Idle, 1, features.Limits{MaxPending: 3})
	for i := 0; i < 10; i++ {
		f.Add([]tracecast.Entity{state("W0", "Worker State", float64(i), float64(i+1), "GEMM")})
	}
	if f.Dropped() != 7 {
		t.Fatalf("dropped %d, want 7", f.Dropped())
	}
	f.Sweep(math.Inf(1))
	f.ApplyAll(nil)
	for i := 10; i < 12; i++ {
		f.Add([]tracecast.Entity{state("W0", "Worker State", float64(i), float64(i+1), "GEMM")})
	}
	if f.Dropped() != 7 {
		t.Fatalf("dropped %d after a sweep freed the buffer, want 7", f.Dropped())
	}
}

// On a StarPU trace, no ready or submitted count's piece and no submission
// ends before the feed's watermark of a batch it comes after (the feed
// reads them at their end; the paje parser's watermark of a variable type
// is on the pieces' ends), and the counts' watermarks are not held back by
// the piece in force (they follow the workers').
func TestTypeWatermarksHoldForVariables(t *testing.T) {
	batches := readBatches(t, "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz")
	if len(batches) < 10 {
		t.Fatalf("%d batches: too few to test", len(batches))
	}
	w := math.Inf(-1)
	checked, listed, lagged := 0, 0, 0
	for _, b := range batches {
		for _, e := range b.Items.([]tracecast.Entity) {
			if e.Type == features.ReadyVariable || e.Type == features.SubmittedVariable || e.Type == features.UserThreadType {
				checked++
				if e.End < w {
					t.Fatalf("%s ends at %g after a batch whose feature watermark was %g", e.Type, e.End, w)
				}
			}
		}
		if tw, ok := b.TypeWatermarks["Worker State"]; ok {
			w = max(w, features.Watermark(b, tw))
		}
		if _, ok := b.TypeWatermarks[features.ReadyVariable]; ok {
			listed++
		}
		if ww, ok := b.TypeWatermarks["Worker State"]; ok && features.Watermark(b, ww) < ww-1000 {
			lagged++ // a second of trace time (ms) behind the workers'
		}
	}
	if checked < 1000 || listed == 0 {
		t.Fatalf("%d entities checked, %d batches listing the ready count's watermark", checked, listed)
	}
	if lagged > 0 {
		t.Fatalf("in %d batches the feed's watermark was more than a second behind the workers'", lagged)
	}
}

// A zero-length state nested in an idle one (an MPI call that took no
// time) makes two changes at one instant with one arrival, its push and
// its pop; they apply in that order, so that the container is idle again
// after it. (An unstable sort of the sweep let the pop go first in long
// sweeps, leaving the container computing until its next state.)
func TestZeroLengthStateEndsWhereItBegins(t *testing.T) {
	f := newFeed(t)
	es := []tracecast.Entity{state("W0", "Worker State", 0, 1000, "Sleeping")}
	for i := 1; i < 500; i++ {
		nested := state("W0", "Worker State", float64(2*i), float64(2*i), "GEMM")
		nested.Imbrication = 1
		es = append(es, nested)
	}
	f.Add(es)
	f.Sweep(2000)
	var c fc.Context
	for i := 1; i < 500; i++ {
		at := float64(2*i) + 1
		f.ApplyThrough(at, nil)
		f.Context(at, &c)
		if len(c.Idle) != 1 || len(c.Busy) != 0 {
			t.Fatalf("at %g, after a zero-length GEMM at %d: idle %v, busy %v; want W0 idle", at, 2*i, c.Idle, c.Busy)
		}
	}
}
