package main

import (
	"bytes"
	"encoding/json"
	"github.com/tracecast/tracecast/internal/cliflags"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/stats/surface"
	"github.com/tracecast/tracecast/study"
)

// studyExec runs the study commands (and predict, for --model) in-process,
// the way root.go registers them, with the log in logs (discarded when nil).
func studyExec(logs io.Writer, args ...string) (string, error) {
	if logs == nil {
		logs = io.Discard
	}
	// Synchronized: a pipeline's stages log from their own goroutines
	// (two parser streams ending at once raced on a bytes.Buffer).
	log = zerolog.New(zerolog.SyncWriter(logs))
	root := &cobra.Command{Use: "tracecast", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(studyCommands()...)
	root.AddCommand(newPredictCmd())
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return cliflags.Usage(err) })
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	err := root.Execute()
	return out.String(), err
}

func studyRun(t *testing.T, args ...string) string {
	t.Helper()
	out, err := studyExec(nil, args...)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out
}

// The CLI end to end: synth writes traces and metadata, train reads them
// and prints one line per trace, predict --model uses the model's window.
// The logic itself is tested in package study.
func TestStudySynthTrainModel(t *testing.T) {
	dir := t.TempDir()
	tr := filepath.Join(dir, "traces")
	os.MkdirAll(tr, 0o755)
	for _, r := range []string{"8", "32"} {
		for _, n := range []string{"1000", "1300", "1600", "1900", "2200"} {
			base := filepath.Join(tr, "T"+n+"_R"+r)
			studyRun(t, "synth", "--tasks", n, "--workers", r, "--seed", n, "-o", base+".trace.gz", "--dot", base+".dot")
		}
	}
	var meta study.SynthMeta
	b, err := os.ReadFile(filepath.Join(tr, "T1300_R32.meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if meta.Workers != 32 || meta.DAG.Tasks != 1300 || meta.DAG.Level < 26 || meta.Trace != "T1300_R32.trace.gz" || meta.DOT != "T1300_R32.dot" {
		t.Fatalf("meta %+v", meta)
	}
	if dot, _ := os.ReadFile(filepath.Join(tr, "T1300_R32.dot")); strings.Count(string(dot), "->") != meta.DAG.Edges {
		t.Fatalf("DOT has %d edges, meta says %d", strings.Count(string(dot), "->"), meta.DAG.Edges)
	}
	out := filepath.Join(dir, "model")
	lines := studyRun(t, "train", "--meta-dir", tr, "-o", out, "--windows", "1000:20000:1000", "--max-samples", "200000", "--jobs", "2")
	if strings.Count(lines, "\n") != 10 || !strings.Contains(lines, "R=8") {
		t.Fatalf("train printed %q", lines)
	}
	mf := filepath.Join(out, "window-model.json")
	m, err := surface.Load(mf)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Surfaces) != 2 || m.Surfaces[0].R != 8 || m.Surfaces[1].R != 32 || len(m.Surfaces[0].Cuts) != 5 || m.Target != 0.95 {
		t.Fatalf("model %+v", m)
	}
	for _, s := range m.Surfaces {
		if s.Fit.R2 < 0 || s.Fit.R2 > 1 || len(s.Fit.Coef) != 15 {
			t.Errorf("R=%d fit R² %g, %d terms", s.R, s.Fit.R2, len(s.Fit.Coef))
		}
	}
	for _, f := range []string{"traces.jsonl", "points.csv", "plots/surface_R008.png", "plots/surface_R032.svg", "plots/window_model.png"} {
		if st, err := os.Stat(filepath.Join(out, f)); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	tj, _ := os.ReadFile(filepath.Join(out, "traces.jsonl"))
	if !strings.Contains(string(tj), `"state":"uniform computation"`) {
		t.Errorf("no 8-worker trace classified as uniform computation:\n%s", tj)
	}
	// A degree-4 surface from three traces is refused with the reason.
	three := []string{"train", "-o", filepath.Join(dir, "three"), "--windows", "1000:20000:1000", "--max-samples", "200000"}
	for _, n := range []string{"1000", "1300", "1600"} {
		three = append(three, filepath.Join(tr, "T"+n+"_R8.meta.json"))
	}
	if r := run(t, nil, three...); r.code != 1 || !strings.Contains(r.stderr, "a degree-4 surface needs points at 4 or more DAG sizes") ||
		!strings.Contains(r.stderr, "lower the degree (--degree) to 3") {
		t.Errorf("train on three traces: exit %d\n%s", r.code, r.stderr)
	}

	// predict --model: the window is the model's for the trace's R and T
	// (counted in the trace, or --tasks).
	trace := filepath.Join(tr, "T1900_R8.trace.gz")
	w1900, _ := m.Window(8, 1900)
	w2500, _ := m.Window(8, 2500)
	for _, tc := range []struct {
		args  []string
		t, w  int
		label string
	}{
		{label: "tasks counted", t: 1900, w: w1900},
		{label: "--tasks", args: []string{"--tasks", "2500"}, t: 2500, w: w2500},
	} {
		var logs bytes.Buffer
		args := append([]string{"predict", "--model", mf, "--max-samples", "200000", "-o", filepath.Join(dir, "pred"), trace}, tc.args...)
		if _, err := studyExec(&logs, args...); err != nil {
			t.Fatalf("%s: %v", tc.label, err)
		}
		var got struct{ R, T, Window int }
		for _, l := range strings.Split(logs.String(), "\n") {
			if strings.Contains(l, "window from the model") {
				json.Unmarshal([]byte(l), &got)
			}
		}
		if got.R != 8 || got.T != tc.t || got.Window != tc.w {
			t.Errorf("%s: logged %+v, want R 8, T %d, window %d", tc.label, got, tc.t, tc.w)
		}
	}
	// A trace on standard input cannot be read twice to count its tasks.
	plain := filepath.Join(dir, "plain.trace")
	studyRun(t, "synth", "--tasks", "1000", "-o", plain)
	stdin, err := os.Open(plain)
	if err != nil {
		t.Fatal(err)
	}
	defer func(f *os.File) { os.Stdin = f; stdin.Close() }(os.Stdin)
	os.Stdin = stdin
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"predict", "--model", mf, "--window", "100", trace}, "give --window or --model, not both"},
		{[]string{"predict", "--model", mf, "--max-samples", "200000", "-"}, "--model on standard input needs --tasks T"},
	} {
		if _, err := studyExec(nil, tc.args...); err == nil || exitCode(err) != 2 || err.Error() != tc.msg {
			t.Errorf("%v: %v, want the usage error %q", tc.args, err, tc.msg)
		}
	}
	if _, err := studyExec(nil, "predict", "--model", filepath.Join(out, "points.csv"), "--max-samples", "200000", trace); err == nil {
		t.Error("a CSV read as a model")
	}
}

func TestStudyReproduceSmall(t *testing.T) {
	dir := t.TempDir()
	// Three DAG sizes: a degree-4 surface is refused (stats/surface), a
	// degree-3 one is quadratic in T.
	studyRun(t, "reproduce", "-o", dir, "--train-subsets", "2", "--validation-subsets", "1", "--sizes", "1000,1500,2000",
		"--cluster-sizes", "8,64", "--max-samples", "200000", "--windows", "1000:20000:1000", "--keep-traces", "--degree", "3")
	rep, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Average prediction hit-rate", "| 2000 |", "R=64", "differs from the paper", "total degree 3 in (w, T) per R (degree 2 in T: 3 DAG sizes)"} {
		if !strings.Contains(string(rep), want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, f := range []string{"plots/validation_a.png", "model/window-model.json", "traces/v0_T1500_R064.trace.gz", "traces/t1_T2000_R008.meta.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	// A kept trace's metadata drives train the same way.
	in, err := study.ReadMeta(filepath.Join(dir, "traces", "t1_T2000_R008.meta.json"))
	if err != nil || in.T < 2000 || in.T > 2025 {
		t.Fatalf("%+v %v", in, err)
	}
}

// TestSynthUsageErrorKeepsFiles: synth checks every option before it
// creates a file, so a usage error leaves the files -o, --dot and --meta
// name as they were; two outputs on one file name their two flags.
func TestSynthUsageErrorKeepsFiles(t *testing.T) {
	dir := t.TempDir()
	tr, dot, meta := filepath.Join(dir, "keep.trace"), filepath.Join(dir, "keep.dot"), filepath.Join(dir, "keep.json")
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"--codelets", "x:0"}, `--codelets: codelet "x:0": mean and weight must be positive`},
		{[]string{"--codelets", "x:1e308"}, `--codelets: codelet "x:1e308": a mean duration of 1e+308 ms is more than 1e+09 ms`},
		{[]string{"--codelets", "x:1e308:1e308"}, `--codelets: codelet "x:1e308:1e308": CV 1e+308 is more than 100`},
		{[]string{"--codelets", "x:1:0.3:1e308"}, `--codelets: codelet "x:1:0.3:1e308": weight 1e+308 is more than 1e+09`},
		{[]string{"--codelets", "x:1:0.3:1:4/1048576"}, `--codelets: codelet "x:1:0.3:1:4/1048576": a mean duration of 1.8014398509481984e+16 ms`},
		{[]string{"--tasks", "10", "--levels", "100"}, "--levels: 100 levels for 10 tasks: must be 0 (drawn) or in [2, 10]"},
		{[]string{"--levels", "-3"}, "--levels: -3 levels"},
		{[]string{"--tasks", "100000000000"}, "--tasks: 100000000000 tasks: must be in [2, 10000000]"},
		{[]string{"--workers", "0"}, "--workers: 0 workers: must be in [1, 1048576]"},
		{[]string{"--max-out-degree", "1"}, "--max-out-degree: 1 for 1000 tasks: must be 0 (drawn) or in [2, 999]"},
		{[]string{"--max-out-degree", "1000000000"}, "--max-out-degree: 1000000000 for 1000 tasks"},
		{[]string{"--edge-ratio", "1e308"}, "--edge-ratio: 1e+308 edges per task for 1000 tasks"},
		{[]string{"--edge-ratio", "-1"}, "--edge-ratio: -1 edges per task"},
		{[]string{"--max-out-degree", "3", "--edge-ratio", "5"}, "--edge-ratio: 5 edges per task is more than the max out-degree 3"},
		{[]string{"--transfer-prob", "5"}, "--transfer-prob: 5: a probability must be in [0, 1]"},
		{[]string{"--transfer", "-5"}, "--transfer: -5 ms: must be in [0, 1e+09] ms"},
		{[]string{"--overhead", "1e308"}, "--overhead: 1e+308 ms: must be in [0, 1e+09] ms"},
	} {
		for _, f := range []string{tr, dot, meta} {
			if err := os.WriteFile(f, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		args := append([]string{"synth", "-o", tr, "--dot", dot, "--meta", meta}, tc.args...)
		_, err := studyExec(nil, args...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: %v (exit %d), want exit 2, %q", tc.args, err, exitCode(err), tc.msg)
		}
		for _, f := range []string{tr, dot, meta} {
			if b, err := os.ReadFile(f); err != nil || string(b) != "keep" {
				t.Errorf("%v: %s now holds %q (%v), want it kept", tc.args, filepath.Base(f), b, err)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-o", tr, "--meta", tr}, "-o and --meta both write " + tr},
		{[]string{"-o", tr, "--dot", tr}, "-o and --dot both write " + tr},
		{[]string{"-o", tr, "--dot", filepath.Join(dir, "keep.meta.json")}, "(--meta's default) and --dot both write"},
	} {
		_, err := studyExec(nil, append([]string{"synth"}, tc.args...)...)
		if err == nil || exitCode(err) != 2 || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: %v, want exit 2, %q", tc.args, err, tc.msg)
		}
	}
}

// TestStudyUsageErrors: errors in the flags, and the study's errors in its
// options, exit with code 2; failures while running with 1.
func TestStudyUsageErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"synth"}, 2, "-o TRACE is required"},
		{[]string{"synth", "-o", filepath.Join(dir, "x.trace"), "--codelets", "bad"}, 2, `--codelets: codelet "bad"`},
		{[]string{"synth", "-o", filepath.Join(dir, "x.trace"), "--tasks", "1"}, 2, "--tasks: 1 tasks: must be in [2, 10000000]"},
		{[]string{"synth", "-o", filepath.Join(dir, "x.trace"), "--levels", "5000"}, 2, "--levels: 5000 levels for 1000 tasks: must be 0 (drawn) or in [2, 1000]"},
		{[]string{"synth", "-o", filepath.Join(dir, "no", "x.trace")}, 1, "no such file"},
		{[]string{"train", "x.trace"}, 2, "-o DIR is required"},
		{[]string{"train", "-o", dir}, 2, "no trace: give --meta-dir DIR, metadata files or traces"},
		{[]string{"train", "-o", dir, "--target", "2", "x"}, 2, "--target 2: want (0, 1]"},
		{[]string{"train", "-o", dir, "--target", "NaN", "x"}, 2, "--target NaN: want (0, 1]"},
		{[]string{"train", "-o", dir, "--degree", "0", "x"}, 2, "--degree 0: want an integer in [1, 10]"},
		{[]string{"train", "-o", dir, "--degree", "11", "x"}, 2, "--degree 11: want an integer in [1, 10]"},
		{[]string{"train", "-o", dir, "--jobs", "0", "x"}, 2, "--jobs 0: want at least 1"},
		{[]string{"train", "-o", dir, "--alpha", "0", "x"}, 2, "--alpha 0: a significance level must be in (0, 1)"},
		{[]string{"train", "-o", dir, "--alpha", "NaN", "x"}, 2, "--alpha NaN: a significance level must be in (0, 1)"},
		{[]string{"train", "-o", dir, "--period", "-1ms", "x"}, 2, "--period -1ms: must be positive (0: per trace)"},
		{[]string{"train", "-o", dir, "--min-period", "-5", "x"}, 2, "--min-period -5: must be 0 or positive"},
		{[]string{"reproduce", "-o", dir, "--target", "NaN"}, 2, "--target NaN: want (0, 1]"},
		{[]string{"train", "-o", dir, "--method", "foo", "x"}, 2, `unknown p-value method "foo"`},
		{[]string{"train", "-o", dir, "--windows", "0:1:1", "x"}, 2, `--windows "0:1:1"`},
		{[]string{"train", "-o", dir, filepath.Join(dir, "missing.trace")}, 1, "no such file"},
		{[]string{"reproduce", "-o", dir, "--sizes", "x"}, 2, `--sizes: bad list "x"`},
		{[]string{"reproduce", "-o", dir, "--cluster-sizes", "8,0"}, 2, `--cluster-sizes: bad list "8,0"`},
		{[]string{"reproduce", "-o", dir, "--train-subsets", "0"}, 2, "need at least one training subset"},
		{[]string{"reproduce", "-o", dir, "--train-subsets", "1", "--validation-subsets", "0", "--sizes", "1000", "--cluster-sizes", "8", "--codelets", "bad"}, 1,
			`t0_T1000_R008: read error: --codelets: codelet "bad"`},
	} {
		_, err := studyExec(nil, tc.args...)
		code := 0
		if err != nil {
			code = exitCode(err)
		}
		if code != tc.code || err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%v: exit %d, %v; want %d, %q", tc.args, code, err, tc.code, tc.msg)
		}
		// A refused synth leaves no trace file behind.
		if _, err := os.Stat(filepath.Join(dir, "x.trace")); err == nil {
			t.Errorf("%v: x.trace left behind", tc.args)
		}
	}
}
