package tasks

import (
	"io"
	"math"
	"os"
	"sort"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/parsers/power"
	"github.com/tracecast/tracecast/stages/energy"
	"github.com/tracecast/tracecast/stages/signal"
)

const (
	demoTrace  = "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"
	fixtureDir = "../../testdata/power/"
)

func TestParseParams(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want map[string]float64
	}{
		{"M240x240x4", 1, map[string]float64{"h0_nx": 240, "h0_ny": 240, "h0_elemsize": 4}},
		{"M240x240x4_M240x240x4", 2, map[string]float64{"h0_nx": 240, "h0_ny": 240, "h0_elemsize": 4, "h1_nx": 240, "h1_ny": 240, "h1_elemsize": 4}},
		{"V1024x8_v4", 2, map[string]float64{"h0_nx": 1024, "h0_elemsize": 8, "h1_elemsize": 4}},
		{"B2x3x4x8", 1, map[string]float64{"h0_nx": 2, "h0_ny": 3, "h0_nz": 4, "h0_elemsize": 8}},
		{"N2x3x4", 1, map[string]float64{"h0_n0": 2, "h0_n1": 3, "h0_elemsize": 4}},
		{"M10x20x30x4", 1, map[string]float64{"h0_nx": 10, "h0_ny": 20, "h0_nvalues": 30, "h0_elemsize": 4}},
		{"Q7x9", 1, map[string]float64{"h0_d0": 7, "h0_d1": 9}},
		{"0_M2x2x8", 1, map[string]float64{"h1_nx": 2, "h1_ny": 2, "h1_elemsize": 8}},
		{"Mx2_M-1x2x4_", 0, map[string]float64{}},
		{"", 0, map[string]float64{}},
	} {
		got := map[string]float64{}
		if n := ParseParams(c.in, got); n != c.n || len(got) != len(c.want) {
			t.Errorf("%q: %d handles %v, want %d %v", c.in, n, got, c.n, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%q: %s = %v, want %v", c.in, k, got[k], v)
			}
		}
	}
}

func TestNumberAndKind(t *testing.T) {
	for s, ok := range map[string]bool{"12": true, "-1": true, "0.004636": true, "1e3": true, "7602c8ce": false,
		"0x10": false, "Inf": false, "NaN": false, "": false, "-1_-1": false, "1e999": false} {
		if _, got := Number(s); got != ok {
			t.Errorf("Number(%q) ok = %v", s, got)
		}
	}
	for s, want := range map[string]float64{"18446744073709551615": -1, "18446744073709551613": -3, "40": 40, "-2": -2} {
		if got, ok := Priority(s); !ok || got != want {
			t.Errorf("Priority(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	for w, k := range map[string]string{"CPU0": "CPU", "CUDA12": "CUDA", "OpenCL1": "OpenCL", "42": "42", "worker": "worker"} {
		if got := WorkerKind(w); got != k {
			t.Errorf("WorkerKind(%q) = %q, want %q", w, got, k)
		}
	}
}

// demo reads the demo trace (user-defined fields kept): its tasks and the
// energy collector fed with every entity.
func demo(t *testing.T) ([]tracecast.Task, *energy.Collector) {
	t.Helper()
	f, err := os.Open(demoTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules := signal.StarPU()
	if err := rules.Compile(); err != nil {
		t.Fatal(err)
	}
	col := energy.NewCollector(rules, nil, energy.DefaultNode)
	x := Extractor{StateType: "Worker State", IDField: FieldJobID, PerSecond: 1000}
	var ts []tracecast.Task
	o := paje.DefaultOptions()
	o.UserDefined = true
	if _, err := paje.Read(f, o, func(es []tracecast.Entity) error {
		col.Add(es)
		for i := range es {
			if tk, ok := x.Task("demo", &es[i]); ok {
				ts = append(ts, tk)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ts, col
}

// TestDemoTasks: the demo Cholesky (20×20 blocks of 240×240 floats) has
// n(n+1)(n+2)/6-style counts: 20 POTRF, 190 TRSM, 190 SYRK, 1140 GEMM, each
// with its data handles parsed.
func TestDemoTasks(t *testing.T) {
	ts, _ := demo(t)
	count := map[string]int{}
	jobs := map[string]bool{}
	for _, tk := range ts {
		count[tk.Codelet]++
		if jobs[tk.JobID] {
			t.Errorf("job %s twice", tk.JobID)
		}
		jobs[tk.JobID] = true
		if tk.DurationS <= 0 || tk.WorkerKind != "CPU" || tk.Footprint == "" {
			t.Errorf("task %+v", tk)
		}
	}
	want := map[string]int{"POTRF": 20, "TRSM": 190, "SYRK": 190, "GEMM": 1140}
	for c, n := range want {
		if count[c] != n {
			t.Errorf("%s: %d tasks, want %d", c, count[c], n)
		}
	}
	if len(count) != len(want) {
		t.Errorf("codelets %v", count)
	}
	var gemm *tracecast.Task
	for i := range ts {
		if ts[i].Codelet == "GEMM" {
			gemm = &ts[i]
			break
		}
	}
	wantP := map[string]float64{"Size": 691200, "h0_nx": 240, "h2_ny": 240, "h2_elemsize": 4, "Priority": 36, "X": 3, "Y": 1, "SubmitOrder": 24, "GFlop": 0.027648, "h0_numa": -1, "h2_numa": -1}
	for k, v := range wantP {
		if gemm.Params[k] != v {
			t.Errorf("first GEMM %s = %v, want %v (%v)", k, gemm.Params[k], v, gemm.Params)
		}
	}
	for _, k := range []string{"JobId", "Tag", "Footprint", "NumaNodes", "Params"} {
		if _, ok := gemm.Params[k]; ok {
			t.Errorf("%s is not a parameter", k)
		}
	}
	if gemm.JobID != "68" || gemm.Footprint != "3d24f508" || gemm.Worker != "CPU0" || math.Abs(gemm.StartS-0.205481647) > 1e-12 || math.Abs(gemm.DurationS-0.0062995870000000025) > 1e-12 {
		t.Errorf("first GEMM %+v", *gemm)
	}
}

func readPower(t *testing.T, name string) []tracecast.PowerSample {
	t.Helper()
	f, err := os.Open(fixtureDir + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := powerReader(f)
	if err != nil {
		t.Fatal(err)
	}
	var out []tracecast.PowerSample
	if _, err := power.Read(r, power.Options{Format: power.Auto, Node: energy.DefaultNode}, func(s []tracecast.PowerSample) error {
		out = append(out, s...)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTaskEnergy: on the demo trace with the fixtures' ground truth (idle
// 91.6 W, +16.8 W per computing worker), each task's energy is its worker's
// half of the node's power over the task. Computed from the timeline, the
// truth is exact; from the 1 kHz instantaneous meter and the 100 Hz RAPL
// counter the join's error is bounded; the tasks' energies add up to the
// energy stage's compute-class energy from the same samples.
func TestTaskEnergy(t *testing.T) {
	ts, col := demo(t)
	tls, err := col.Build(1000)
	if err != nil {
		t.Fatal(err)
	}
	tl := tls[energy.DefaultNode]
	truthOf := func(a, b float64) float64 {
		e := 0.0
		for i, s := range tl.Steps {
			end := tl.End
			if i+1 < len(tl.Steps) {
				end = tl.Steps[i+1].T
			}
			lo, hi := math.Max(a, s.T), math.Min(b, end)
			if hi > lo {
				e += (91.6 + 16.8*float64(s.Count[signal.Compute])) * (hi - lo) / float64(tl.R)
			}
		}
		return e
	}
	for _, c := range []struct {
		file            string
		medRel, taskSum float64
	}{
		{"cholesky-2cpu.watts.csv.gz", 0.002, 1e-9},
		{"cholesky-2cpu.rapl.csv.gz", 0.002, 1e-9},
	} {
		t.Run(c.file, func(t *testing.T) {
			samples := readPower(t, c.file)
			mine := append([]tracecast.Task(nil), ts...)
			st, res := AttributeEnergy(mine, tls, col.Node, samples, energy.Options{MaxGap: 5})
			if st.Uncovered != 0 || st.WithEnergy != len(ts) {
				t.Fatalf("stats %+v", st)
			}
			var rels []float64
			sumTruth := 0.0
			for _, tk := range mine {
				want := truthOf(tk.StartS, tk.StartS+tk.DurationS)
				sumTruth += want
				if *tk.EnergyJ < 0 {
					t.Fatalf("negative energy %+v", tk)
				}
				rels = append(rels, math.Abs(*tk.EnergyJ-want)/want)
			}
			sort.Float64s(rels)
			if med := rels[len(rels)/2]; med > c.medRel {
				t.Errorf("median relative error %.4f > %.4f", med, c.medRel)
			}
			compute := res.Totals[0].ClassEnergy[signal.Compute]
			if math.Abs(st.TotalJ-compute)/compute > c.taskSum {
				t.Errorf("tasks %.4f J, compute class %.4f J", st.TotalJ, compute)
			}
			if math.Abs(st.TotalJ-sumTruth)/sumTruth > 1.5e-3 {
				t.Errorf("tasks %.4f J, truth %.4f J", st.TotalJ, sumTruth)
			}
			t.Logf("%s: %d tasks, %.3f J (truth %.3f J, compute class %.3f J), median rel. error %.2g, p90 %.2g",
				c.file, len(mine), st.TotalJ, sumTruth, compute, rels[len(rels)/2], rels[len(rels)*9/10])
		})
	}
	// A gap: tasks it cuts get no energy.
	samples := readPower(t, "cholesky-2cpu.gaps.jsonl.gz")
	mine := append([]tracecast.Task(nil), ts...)
	st, _ := AttributeEnergy(mine, tls, col.Node, samples, energy.Options{MaxGap: 0.1})
	if st.Uncovered == 0 || st.WithEnergy == 0 {
		t.Errorf("gap fixture: %+v", st)
	}
	for _, tk := range mine {
		inGap := tk.StartS < 3.5 && tk.StartS+tk.DurationS > 3.0
		if inGap && tk.DurationS > 0 && tk.EnergyJ != nil {
			t.Errorf("task in the 3.0–3.5 s gap has energy: %+v", tk)
		}
	}
}

func powerReader(f *os.File) (io.Reader, error) { return input.Decompress(f) }
