package signal

import (
	"testing"

	"github.com/tracecast/tracecast"
)

func st(c string, s, e float64, imb int, v string) tracecast.Entity {
	return tracecast.Entity{Nature: tracecast.NatureState, Container: c, Type: "Worker State", Start: s, End: e, Imbrication: imb, Value: v}
}

func TestStarPUSignal(t *testing.T) {
	r := StarPU()
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(r)
	// Entities arrive in completion order, not start order.
	b.Add([]tracecast.Entity{
		st("A", 0, 2, 0, "Sleeping"),
		st("A", 3, 4, 1, "FetchingInput"),
		st("A", 2, 5, 0, "GEMM"),
		st("B", 1, 6, 0, "GEMM"),
		st("A", 5, 8, 0, "Sleeping"),
		st("B", 6, 8, 0, "Overhead"),
		{Nature: tracecast.NatureState, Container: "B", Type: "Thread State", Start: 0, End: 9, Value: "Running"},
		{Nature: tracecast.NatureContainer, Container: "T1", Type: "Worker", Value: "A"},
		{Nature: tracecast.NatureContainer, Container: "T2", Type: "Worker", Value: "B"},
		{Nature: tracecast.NatureContainer, Container: "T3", Type: "Worker", Value: "C"}, // never busy
	})
	sig, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if sig.R != 3 || sig.T0() != 0 || sig.End != 8 {
		t.Fatalf("R=%d T0=%v End=%v", sig.R, sig.T0(), sig.End)
	}
	want := []struct {
		t                   float64
		idle, compute, comm int32
	}{{0, 3, 0, 0}, {1, 2, 1, 0}, {2, 1, 2, 0}, {3, 1, 1, 1}, {4, 1, 2, 0}, {5, 2, 1, 0}, {6, 3, 0, 0}}
	if len(sig.Steps) != len(want) {
		t.Fatalf("%d steps, want %d: %+v", len(sig.Steps), len(want), sig.Steps)
	}
	for i, w := range want {
		s := sig.Steps[i]
		if s.T != w.t || s.Count[Idle] != w.idle || s.Count[Compute] != w.compute || s.Count[Comm] != w.comm {
			t.Errorf("step %d: %+v, want %+v", i, s, w)
		}
	}
	if p, ok := sig.PaperPeriod(Idle); !ok || p != 0.5 {
		t.Errorf("paper period %v %v, want 0.5", p, ok)
	}
	var xs []int
	n := sig.Sample(Idle, 1, func(k int, tk float64, x int) {
		if tk != float64(k) {
			t.Errorf("t_%d = %v", k, tk)
		}
		xs = append(xs, x)
	})
	wantX := []int{3, 2, 1, 1, 1, 2, 3, 3}
	if n != len(wantX) || n != sig.Samples(1) {
		t.Fatalf("%d samples (Samples says %d), want %d", n, sig.Samples(1), len(wantX))
	}
	for i := range wantX {
		if xs[i] != wantX[i] {
			t.Errorf("x_%d = %d, want %d", i, xs[i], wantX[i])
		}
	}
}

func TestSMPIRules(t *testing.T) {
	r := SMPI()
	if err := r.Compile(); err != nil {
		t.Fatal(err)
	}
	for v, want := range map[string]Class{
		"PMPI_Recv": Idle, "PMPI_Wait": Idle, "PMPI_Waitall": Idle, "PMPI_Barrier": Idle, "MPI_Wait": Idle,
		"PMPI_Send": Comm, "PMPI_Isend": Comm, "PMPI_Allreduce": Comm, "PMPI_Init": Comm, "computing": Compute,
	} {
		if got := r.Classify(v); got != want {
			t.Errorf("%s: %v, want %v", v, got, want)
		}
	}
	if r.Outside != Compute {
		t.Error("outside MPI calls a rank computes")
	}
}

func TestNoStates(t *testing.T) {
	r := StarPU()
	r.Compile()
	if _, err := NewBuilder(r).Build(); err == nil {
		t.Fatal("a trace without worker states must be an error")
	}
}

// A given period so small that (end − t_0)/period overflows an int must be
// refused like any period making too many samples: the count used to wrap
// to a negative int, pass the check, and the sampler then ran for ever
// (t_0 + kΔ never reaching the end).
func TestTinyPeriodRefused(t *testing.T) {
	for _, p := range []float64{1e-300, 1e-20, 5e-324} {
		if n := samples(14.7, 6982.3, p); n <= 0 {
			t.Errorf("period %g: samples = %d, want a huge positive count", p, n)
		}
		if _, _, err := choosePeriod(14.7, 6982.3, 0, false, p, 0, 10_000_000, "ms"); err == nil {
			t.Errorf("period %g: accepted, want an error (too many samples)", p)
		}
	}
}
