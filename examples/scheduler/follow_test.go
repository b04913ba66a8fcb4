package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast/app/specs"
)

// task is a decision as the comparison sees it: the probability aside (the
// scheduler reports the window's, the engine the grid point's).
type task struct {
	run, worker, mode, outcome string
	d, alpha, start            float64
}

func tasksOf(t *testing.T, b []byte) []task {
	t.Helper()
	var out []task
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var d decision
		if err := json.Unmarshal(l, &d); err != nil {
			t.Fatal(err)
		}
		out = append(out, task{d.Run, d.Worker, d.Mode, d.Outcome, d.D, d.Alpha, d.Start})
	}
	slices.SortFunc(out, func(a, b task) int {
		if c := cmpStr(a.worker, b.worker); c != 0 {
			return c
		}
		if a.d != b.d {
			return cmpF(a.d, b.d)
		}
		if a.alpha != b.alpha {
			return cmpF(a.alpha, b.alpha)
		}
		return cmpF(a.start, b.start)
	})
	return out
}

func cmpStr(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func cmpF(a, b float64) int { return cmpStr(fmt.Sprintf("%030.12f", a), fmt.Sprintf("%030.12f", b)) }

// compareTasks checks that the scheduler launched what tracecast backfill
// --policy forecast launched: the same workers, lengths and outcomes, at
// the same times (to 1 ns: an event within 1 ns of a planned launch may
// move it by less).
func compareTasks(t *testing.T, got, want []task) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%d decisions, want %d", len(got), len(want))
	}
	bad := 0
	for i := range min(len(got), len(want)) {
		g, w := got[i], want[i]
		gs, ws := g.start, w.start
		g.start, w.start = 0, 0
		if g != w || math.Abs(gs-ws) > 1e-9 {
			if bad++; bad <= 5 {
				t.Errorf("decision %d: got %+v at %.12f, want %+v at %.12f", i, g, gs, w, ws)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d decisions differ", bad, len(want))
	}
}

// TestFollowerEqualsBackfill: a scheduler that applies the plans of
// `tracecast backfill --plans` launches exactly what the forecast policy
// launched, in both modes, with several lengths and α, on a StarPU run and
// an SMPI run.
func TestFollowerEqualsBackfill(t *testing.T) {
	traces := []string{"../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "../../testdata/smpi/dynfarm-16.trace.gz"}
	modes := []specs.Backfill{
		{Mode: "wait", Alphas: []float64{10, 1}, Tasks: []float64{0.001, 0.01}},
		{Mode: "kill", Overhead: 0.0005, Alphas: []float64{1}, Tasks: []float64{0.001, 0.01, 0.1}},
	}
	for _, path := range traces {
		for _, o := range modes {
			if path != traces[0] { // 16 ranks: one length is enough (64 000 decisions at 1 ms)
				o.Tasks = []float64{0.01}
			}
			t.Run(filepath.Base(path)+"/"+o.Mode, func(t *testing.T) {
				dir := t.TempDir()
				tr := specs.DefaultTrace()
				tr.Path = path
				o.Rules, o.Policies, o.Plans, o.Out = "auto", []string{"forecast"}, true, dir
				if _, err := (specs.Runner{Log: zerolog.Nop()}).Backfill(t.Context(), tr, o); err != nil {
					t.Fatal(err)
				}
				// Who listens to the plans changes nothing.
				quiet := o
				quiet.Plans, quiet.Out = false, t.TempDir()
				if _, err := (specs.Runner{Log: zerolog.Nop()}).Backfill(t.Context(), tr, quiet); err != nil {
					t.Fatal(err)
				}
				a, _ := os.ReadFile(filepath.Join(dir, "decisions.jsonl"))
				if b, _ := os.ReadFile(filepath.Join(quiet.Out, "decisions.jsonl")); !bytes.Equal(a, b) {
					t.Error("the decisions with --plans differ from those without")
				}
				var out bytes.Buffer
				if err := fromFile(filepath.Join(dir, "plans.jsonl"), &out); err != nil {
					t.Fatal(err)
				}
				want, err := os.ReadFile(filepath.Join(dir, "decisions.jsonl"))
				if err != nil {
					t.Fatal(err)
				}
				w := tasksOf(t, want)
				if len(w) < 50 {
					t.Fatalf("only %d decisions: not a test", len(w))
				}
				compareTasks(t, tasksOf(t, out.Bytes()), w)
				t.Logf("%d decisions", len(w))
			})
		}
	}
}
