package study

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/stats/surface"
)

// synthDefaults are the CLI's defaults for a workload.
func synthDefaults(tasks, workers int, seed uint64) SynthConfig {
	return SynthConfig{Tasks: tasks, Workers: workers, Seed: seed, Codelets: "dag_task:10:0.3:1", TransferMS: 1, OverheadMS: 0.001}
}

// analyzeDefaults sample at most 200000 samples per trace, as the CLI tests do.
func analyzeDefaults(windows []int) AnalyzeConfig {
	return AnalyzeConfig{MaxSamples: 200_000, Windows: windows, Method: ks.Matlab, Alpha: 0.05}
}

func windowRange(from, to, step int) []int {
	var ws []int
	for w := from; w <= to; w += step {
		ws = append(ws, w)
	}
	return ws
}

func TestSynthesize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		edit    func(*SynthConfig)
		usage   string // the usage error's message; "" for success
		workers int
	}{
		{name: "defaults", edit: func(*SynthConfig) {}},
		{name: "transfers and two kinds", edit: func(c *SynthConfig) { c.TransferProb, c.Codelets = 0.3, "a:5:0.2:1,b:20" }},
		{name: "fixed shape", edit: func(c *SynthConfig) { c.Levels, c.MaxOutDegree, c.EdgeRatio = 40, 10, 1.8 }},
		{name: "bad codelets", edit: func(c *SynthConfig) { c.Codelets = "bad" }, usage: `--codelets: codelet "bad": want NAME:MEAN_MS[:CV[:WEIGHT[:N1/N2/...[:EXP]]]]`},
		{name: "one task", edit: func(c *SynthConfig) { c.Tasks = 1 }, usage: "--tasks: 1 tasks: must be in [2, 10000000]"},
		{name: "no worker", edit: func(c *SynthConfig) { c.Workers = 0 }, usage: "--workers: 0 workers: must be in [1, 1048576]"},
		{name: "impossible DAG", edit: func(c *SynthConfig) { c.Levels = 5000 }, usage: "--levels: 5000 levels for 1000 tasks"},
		{name: "NaN times", edit: func(c *SynthConfig) { c.Codelets = "x:1e308:1e308" }, usage: `--codelets: codelet "x:1e308:1e308": CV 1e+308 is more than 100`},
		{name: "NaN transfer probability", edit: func(c *SynthConfig) { c.TransferProb = math.NaN() }, usage: "--transfer-prob: NaN: a probability must be in [0, 1]"},
		{name: "NaN edge ratio", edit: func(c *SynthConfig) { c.EdgeRatio = math.NaN() }, usage: "--edge-ratio: NaN edges per task"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := synthDefaults(1000, 8, 3)
			tc.edit(&c)
			var tr, dot bytes.Buffer
			m, err := c.Synthesize(&tr, &dot)
			if tc.usage != "" {
				var ue *UsageError
				if !errors.As(err, &ue) || !strings.Contains(err.Error(), tc.usage) {
					t.Fatalf("error %v (%T), want a usage error %q", err, err, tc.usage)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if m.Kind != "tracecast.synth" || m.Tasks != 1000 || m.Workers != 8 || m.DAG.Tasks != 1000 || m.Summary.Lines == 0 || m.Transfer != [2]float64{c.TransferProb, c.TransferMS} {
				t.Fatalf("meta %+v", m)
			}
			if strings.Count(dot.String(), "->") != m.DAG.Edges {
				t.Errorf("DOT has %d edges, meta says %d", strings.Count(dot.String(), "->"), m.DAG.Edges)
			}
			// The same configuration gives the same trace.
			var again bytes.Buffer
			if _, err := c.Synthesize(&again, nil); err != nil || !bytes.Equal(tr.Bytes(), again.Bytes()) {
				t.Errorf("a second run differs (%v)", err)
			}
		})
	}
}

func TestWriteSynth(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		files             SynthFiles
		meta, trace, dotf string // meta file, and the paths it records
	}{
		{files: SynthFiles{Trace: "a.trace.gz"}, meta: "a.meta.json", trace: "a.trace.gz"},
		{files: SynthFiles{Trace: "b.trace", DOT: "b.dot"}, meta: "b.meta.json", trace: "b.trace", dotf: "b.dot"},
		{files: SynthFiles{Trace: "c.trace", Meta: "sub/c.json"}, meta: "sub/c.json", trace: "../c.trace"},
	} {
		t.Run(tc.files.Trace, func(t *testing.T) {
			f := tc.files
			f.Trace = filepath.Join(dir, f.Trace)
			if f.DOT != "" {
				f.DOT = filepath.Join(dir, f.DOT)
			}
			if f.Meta != "" {
				f.Meta = filepath.Join(dir, f.Meta)
				os.MkdirAll(filepath.Dir(f.Meta), 0o755)
			}
			if got := f.MetaPath(); got != filepath.Join(dir, tc.meta) {
				t.Errorf("MetaPath %s, want %s", got, tc.meta)
			}
			m, err := WriteSynth(synthDefaults(500, 4, 9), f, zerolog.Logger{})
			if err != nil {
				t.Fatal(err)
			}
			if m.Trace != tc.trace || m.DOT != tc.dotf {
				t.Errorf("meta records trace %q, dot %q; want %q, %q", m.Trace, m.DOT, tc.trace, tc.dotf)
			}
			in, err := ReadMeta(filepath.Join(dir, tc.meta))
			if err != nil || in.Path != f.Trace || in.T != 500 {
				t.Fatalf("ReadMeta: %+v, %v; want %s, T 500", in, err, f.Trace)
			}
			if n, err := TasksInTrace(in.Path); err != nil || n != 500 {
				t.Errorf("TasksInTrace: %d, %v", n, err)
			}
		})
	}
	if _, err := WriteSynth(synthDefaults(500, 4, 9), SynthFiles{Trace: filepath.Join(dir, "no", "such", "dir.trace")}, zerolog.Logger{}); err == nil {
		t.Error("no error for a trace in a missing directory")
	}
}

func TestReadMetaAndInputs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("x.meta.json", `{"kind":"tracecast.synth","trace":"x.trace.gz","dag":{"tasks":1234},"labels":{"phase":"train"}}`)
	abs := write("y.meta.json", `{"kind":"tracecast.synth","trace":"/abs/y.trace","dag":{"tasks":7}}`)
	for _, tc := range []struct {
		path string
		want Input
		err  string
	}{
		{path: good, want: Input{Path: filepath.Join(dir, "x.trace.gz"), T: 1234, Labels: map[string]string{"phase": "train"}}},
		{path: abs, want: Input{Path: "/abs/y.trace", T: 7}},
		{path: write("other.json", `{"kind":"tracecast.window-size-model","trace":"t"}`), err: "not a synth metadata file"},
		{path: write("notrace.json", `{"kind":"tracecast.synth"}`), err: "not a synth metadata file"},
		{path: write("bad.json", `{`), err: "unexpected end of JSON input"},
		{path: filepath.Join(dir, "missing.json"), err: "no such file"},
	} {
		in, err := ReadMeta(tc.path)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: %v, want %q", tc.path, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(in, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.path, in, err, tc.want)
		}
	}
	// --meta-dir's *.meta.json in name order, then the arguments: .json
	// files are metadata, others traces.
	ins, err := Inputs(dir, []string{good, "plain.trace"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, in := range ins {
		got = append(got, fmt.Sprintf("%s:%d", filepath.Base(in.Path), in.T))
	}
	if want := "x.trace.gz:1234 y.trace:7 x.trace.gz:1234 plain.trace:0"; strings.Join(got, " ") != want {
		t.Errorf("Inputs: %s, want %s", strings.Join(got, " "), want)
	}
	if ins, err := Inputs("", nil); err != nil || len(ins) != 0 {
		t.Errorf("no input: %v, %v", ins, err)
	}
	if _, err := Inputs("", []string{filepath.Join(dir, "bad.json")}); err == nil {
		t.Error("a bad metadata argument accepted")
	}
}

func TestParallel(t *testing.T) {
	for _, jobs := range []int{0, 1, 3, 20} {
		out, err := parallel(10, jobs, func(i int) (int, error) { return i * i, nil })
		if err != nil || len(out) != 10 || out[9] != 81 || out[3] != 9 {
			t.Errorf("jobs %d: %v, %v", jobs, out, err)
		}
		// The first error in index order, whichever fails first in time.
		_, err = parallel(10, jobs, func(i int) (int, error) {
			if i == 4 || i == 7 {
				return 0, fmt.Errorf("job %d", i)
			}
			return i, nil
		})
		if err == nil || err.Error() != "job 4" {
			t.Errorf("jobs %d: error %v, want job 4", jobs, err)
		}
	}
}

func TestAnalyzeTrace(t *testing.T) {
	c := synthDefaults(1000, 8, 5)
	var tr bytes.Buffer
	if _, err := c.Synthesize(&tr, nil); err != nil {
		t.Fatal(err)
	}
	ws := windowRange(1000, 20000, 1000)
	for _, tc := range []struct {
		name    string
		cfg     AnalyzeConfig
		T       int
		wantT   int
		predict WindowFunc
		usage   bool
		// noVerdict: the window is too long for a verdict.
		noVerdict bool
	}{
		{name: "tasks seen", cfg: analyzeDefaults(ws), wantT: 1000},
		{name: "DAG size given", cfg: analyzeDefaults(ws), T: 1013, wantT: 1013},
		{name: "with validation", cfg: analyzeDefaults(ws), wantT: 1000, predict: func(R, T int) (int, error) { return 2000, nil }},
		{name: "validation window too long", cfg: analyzeDefaults(ws), wantT: 1000, predict: func(R, T int) (int, error) { return 150_000, nil }, noVerdict: true},
		{name: "period too small", cfg: AnalyzeConfig{Period: tracecast.TraceUnits(1e-6), MaxSamples: 1000, Windows: ws, Method: ks.Matlab, Alpha: 0.05}, usage: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := AnalyzeTrace(bytes.NewReader(tr.Bytes()), "x", tc.T, &tc.cfg, tc.predict)
			if tc.usage {
				var ue *UsageError
				if !errors.As(err, &ue) {
					t.Fatalf("error %v, want a usage error", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if a.R != 8 || a.T != tc.wantT || a.Tasks != 1000 || a.Samples != 200_000 || len(a.Sweep) != len(ws) || a.Class.State != surface.UniformComputation {
				t.Fatalf("analysis %+v", a)
			}
			if tc.predict == nil {
				if a.Validate != nil {
					t.Error("validation without a window")
				}
				return
			}
			v := a.Validate
			if tc.noVerdict {
				// A window longer than half the trace: no verdict, so no
				// hit-rate — null in traces.jsonl, not 0 — and an empty
				// hit_rate in points.csv for the windows never compared.
				if v == nil || v.Verdicts != 0 || v.HitRate != nil {
					t.Fatalf("validation %+v", v)
				}
				a.Sweep = append(a.Sweep, ks.SweepResult{Window: 150_000, Samples: 200_000})
				dir := t.TempDir()
				if err := WriteOutputs(dir, []*Analysis{a}); err != nil {
					t.Fatal(err)
				}
				tj, _ := os.ReadFile(filepath.Join(dir, "traces.jsonl"))
				if !strings.Contains(string(tj), `"verdicts":0,"hits":0,"hit_rate":null`) {
					t.Errorf("traces.jsonl: %s", tj)
				}
				pts, _ := os.ReadFile(filepath.Join(dir, "points.csv"))
				if !strings.Contains(string(pts), ",uniform computation,150000,200000,0,0,\n") || !strings.Contains(string(pts), ",uniform computation,1000,200000,199,") {
					t.Errorf("points.csv:\n%s", pts)
				}
				return
			}
			if v == nil || v.Window != 2000 || v.Verdicts == 0 || v.Hits > v.Verdicts || v.HitRate == nil || math.Abs(*v.HitRate-float64(v.Hits)/float64(v.Verdicts)) > 1e-12 || v.HorizonS <= 0 {
				t.Errorf("validation %+v", v)
			}
		})
	}
	if _, err := AnalyzeTrace(strings.NewReader("not a trace\n"), "bad", 0, &AnalyzeConfig{Windows: ws}, nil); err == nil {
		t.Error("no error on a bad trace")
	}
}

// TestTrain is the benchmarking phase on 10 traces: 5 DAG sizes × R = 8, 32.
func TestTrain(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "traces")
	os.MkdirAll(tr, 0o755)
	for _, r := range []int{8, 32} {
		for _, n := range []int{1000, 1300, 1600, 1900, 2200} {
			base := filepath.Join(tr, fmt.Sprintf("T%d_R%d", n, r))
			if _, err := WriteSynth(synthDefaults(n, r, uint64(n)), SynthFiles{Trace: base + ".trace.gz", DOT: base + ".dot"}, zerolog.Logger{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	ins, err := Inputs(tr, nil)
	if err != nil || len(ins) != 10 {
		t.Fatalf("%d inputs, %v", len(ins), err)
	}
	out := filepath.Join(dir, "model")
	cfg := &TrainConfig{AnalyzeConfig: analyzeDefaults(windowRange(1000, 20000, 1000)), Target: 0.95, Degree: 4, Jobs: 2, Plots: true}
	as, m, err := Train(ins, out, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(as) != 10 || as[0].Trace != ins[0].Path {
		t.Fatalf("%d analyses, first %s", len(as), as[0].Trace)
	}
	// The written model is the one returned.
	mf := filepath.Join(out, "window-model.json")
	loaded, err := surface.Load(mf)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(loaded.Surfaces[0].Cuts, m.Surfaces[0].Cuts) {
		t.Error("the file's cuts differ from the returned model's")
	}
	if len(m.Surfaces) != 2 || m.Surfaces[0].R != 8 || m.Surfaces[1].R != 32 || len(m.Surfaces[0].Cuts) != 5 || m.Target != 0.95 ||
		m.WMin != 1000 || m.WMax != 20000 || m.WStep != 1000 || m.Sampling != "automatic period per trace, min-period 0, max-samples 200000" {
		t.Fatalf("model %+v", m)
	}
	for _, s := range m.Surfaces {
		if s.Traces != 5 || s.Fit.R2 < 0 || s.Fit.R2 > 1 || len(s.Fit.Coef) != 15 {
			t.Errorf("R=%d: %d traces, fit R² %g, %d terms", s.R, s.Traces, s.Fit.R2, len(s.Fit.Coef))
		}
	}
	for _, f := range []string{"traces.jsonl", "points.csv", "plots/surface_R008.png", "plots/surface_R032.svg", "plots/window_model.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	tj, _ := os.ReadFile(filepath.Join(out, "traces.jsonl"))
	if !strings.Contains(string(tj), `"state":"uniform computation"`) || strings.Count(string(tj), "\n") != 10 {
		t.Errorf("traces.jsonl:\n%s", tj)
	}
	if pts, _ := os.ReadFile(filepath.Join(out, "points.csv")); strings.Count(string(pts), "\n") != 1+10*20 {
		t.Errorf("points.csv has %d lines, want a header and 10 × 20 points", strings.Count(string(pts), "\n"))
	}

	// The model's windows: the trained cuts, and interpolation in log2 R.
	for _, c := range m.Surfaces[0].Cuts {
		w, err := WindowFromModel(mf, 8, c.T)
		if err != nil || w != c.W {
			t.Errorf("R=8 T=%d: %d, %v; want %d", c.T, w, err, c.W)
		}
	}
	w8, _ := m.Window(8, 1600)
	w32, _ := m.Window(32, 1600)
	w16, err := WindowFromModel(mf, 16, 1600)
	if err != nil || w16 < min(w8, w32) || w16 > max(w8, w32) {
		t.Errorf("R=16: %d, %v; between %d and %d", w16, err, w8, w32)
	}
	trace := filepath.Join(tr, "T1900_R8.trace.gz")
	if n, err := TasksInTrace(trace); err != nil || n != 1900 {
		t.Errorf("TasksInTrace: %d, %v", n, err)
	}
	w1900, _ := m.Window(8, 1900)
	w1700, _ := m.Window(8, 1700)
	for _, tc := range []struct{ T, wantW, wantT int }{{0, w1900, 1900}, {1700, w1700, 1700}} {
		if w, T, err := ModelWindow(mf, trace, 8, tc.T); err != nil || w != tc.wantW || T != tc.wantT {
			t.Errorf("ModelWindow T=%d: %d, %d, %v; want %d, %d", tc.T, w, T, err, tc.wantW, tc.wantT)
		}
	}
	if _, err := WindowFromModel(filepath.Join(out, "points.csv"), 8, 1000); err == nil {
		t.Error("a CSV read as a model")
	}
	if _, _, err := ModelWindow(mf, filepath.Join(dir, "missing.trace"), 8, 0); err == nil {
		t.Error("no error counting the tasks of a missing trace")
	}

	// The same analyses whatever the number of jobs.
	as1, err := Analyses(ins, 1, &cfg.AnalyzeConfig, nil)
	if err != nil || !reflect.DeepEqual(as1, as) {
		t.Errorf("one job gives other analyses (%v)", err)
	}
	// Traces too short for two windows give no point.
	short := *cfg
	short.Windows = []int{150_000}
	if _, _, err := Train(ins[:2], filepath.Join(dir, "short"), &short); err == nil || !strings.Contains(err.Error(), "no hit-rate point") {
		t.Errorf("short traces: %v", err)
	}
	// A degree-4 surface from three traces of one cluster size is refused,
	// with the reason and the degree they allow; that degree trains.
	var three []Input
	for _, in := range ins {
		if strings.Contains(in.Path, "_R8.") && len(three) < 3 {
			three = append(three, in)
		}
	}
	if _, _, err := Train(three, filepath.Join(dir, "three"), cfg); err == nil ||
		!strings.Contains(err.Error(), "fit for R=8: surface: too few sizes for the degree: a degree-4 surface needs points at 4 or more DAG sizes") ||
		!strings.Contains(err.Error(), "lower the degree (--degree) to 3") {
		t.Errorf("three traces: %v", err)
	}
	deg3 := *cfg
	deg3.Degree = 3
	if _, m, err := Train(three, filepath.Join(dir, "three"), &deg3); err != nil || m.Surfaces[0].Fit.DegreeT != 2 {
		t.Errorf("three traces, degree 3: %v", err)
	}
}

func TestReproduce(t *testing.T) {
	dir := t.TempDir()
	c := &ReproduceConfig{
		// Three DAG sizes allow a degree-3 surface (quadratic in T).
		TrainConfig:  TrainConfig{AnalyzeConfig: analyzeDefaults(windowRange(1000, 20000, 1000)), Target: 0.95, Degree: 3, Jobs: 2, Plots: true},
		Synth:        synthDefaults(0, 0, 0),
		Out:          dir,
		TrainSubsets: 2, ValidationSubsets: 1,
		Sizes: []int{1000, 1500, 2000}, ClusterSizes: []int{8, 64},
		Seed: 2013, KeepTraces: true,
	}
	var logs bytes.Buffer
	if err := Reproduce(c, zerolog.New(zerolog.SyncWriter(&logs))); err != nil {
		t.Fatal(err)
	}
	rep, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Average prediction hit-rate", "| 2000 |", "R=64", "differs from the paper", "total degree 3 in (w, T) per R (degree 2 in T: 3 DAG sizes)",
		"2 subsets × 3 DAG sizes (1000,1500,2000) × 2 cluster sizes (8,64) = 12 traces", "1 disjoint subsets × 3 sizes × 2 cluster sizes = 6 traces"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range []string{"plots/validation_a.png", "model/window-model.json", "model/plots/window_model.svg", "traces/v0_T1500_R064.trace.gz", "traces/t1_T2000_R008.meta.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// traces.jsonl holds both phases, the validation ones with their verdicts.
	tj, _ := os.ReadFile(filepath.Join(dir, "model", "traces.jsonl"))
	if n, v := strings.Count(string(tj), "\n"), strings.Count(string(tj), `"validation"`); n != 18 || v != 6 {
		t.Errorf("traces.jsonl: %d lines, %d validated; want 18, 6", n, v)
	}
	for _, msg := range []string{"benchmarking phase", "prediction phase", "reproduced"} {
		if !strings.Contains(logs.String(), msg) {
			t.Errorf("no %q in the log:\n%s", msg, logs.String())
		}
	}
	// A kept trace's metadata drives train the same way; a group's DAGs
	// have T to T+12 tasks.
	in, err := ReadMeta(filepath.Join(dir, "traces", "t1_T2000_R008.meta.json"))
	if err != nil || in.T < 2000 || in.T > 2025 || in.Labels["phase"] != "train" || in.Labels["subset"] != "1" || in.Labels["group"] != "2000" {
		t.Fatalf("%+v %v", in, err)
	}
	if n, err := TasksInTrace(in.Path); err != nil || n != in.T {
		t.Errorf("kept trace has %d tasks (%v), its metadata says %d", n, err, in.T)
	}
}

func TestReproduceErrors(t *testing.T) {
	ok := ReproduceConfig{
		TrainConfig: TrainConfig{AnalyzeConfig: analyzeDefaults([]int{1000}), Target: 0.95, Degree: 4, Jobs: 1},
		Synth:       synthDefaults(0, 0, 0), TrainSubsets: 1, Sizes: []int{500}, ClusterSizes: []int{4},
	}
	for _, tc := range []struct {
		name  string
		edit  func(*ReproduceConfig)
		usage bool
		msg   string
	}{
		{name: "no training subset", edit: func(c *ReproduceConfig) { c.TrainSubsets = 0 }, usage: true, msg: "need at least one training subset"},
		{name: "negative validation subsets", edit: func(c *ReproduceConfig) { c.ValidationSubsets = -1 }, usage: true, msg: "need at least one training subset"},
		{name: "no cluster size", edit: func(c *ReproduceConfig) { c.ClusterSizes = nil }, usage: true, msg: "need candidate window sizes"},
		// A bad workload fails in the synthesizer, behind the pipe: the
		// trace's read error, not a usage error (as before the move).
		{name: "bad codelets", edit: func(c *ReproduceConfig) { c.Synth.Codelets = "bad" }, msg: `t0_T500_R004: read error: --codelets: codelet "bad"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			c.Out = t.TempDir()
			tc.edit(&c)
			err := Reproduce(&c, zerolog.Logger{})
			var ue *UsageError
			if err == nil || !strings.Contains(err.Error(), tc.msg) || errors.As(err, &ue) != tc.usage {
				t.Errorf("error %v (usage %v), want %q (usage %v)", err, errors.As(err, &ue), tc.msg, tc.usage)
			}
		})
	}
}

func TestSpecOrAndMean(t *testing.T) {
	if s := specOr("", []int{8, 16}); s != "8,16" {
		t.Errorf("specOr: %q", s)
	}
	if s := specOr("8:16:8", []int{8, 16}); s != "8:16:8" {
		t.Errorf("specOr: %q", s)
	}
	if m := mean([]float64{1, 2, 6}); m != 3 {
		t.Errorf("mean %g", m)
	}
	if m := mean(nil); !math.IsNaN(m) {
		t.Errorf("mean of none %g, want NaN", m)
	}
}
