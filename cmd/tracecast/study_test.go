package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/spf13/cobra"
	"github.com/tracecast/tracecast/stats/surface"
)

// studyRoot runs the study commands in-process, the way root.go will
// register them.
func studyRun(t *testing.T, args ...string) string {
	t.Helper()
	log = zerolog.New(io.Discard)
	root := &cobra.Command{Use: "tracecast", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(studyCommands()...)
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs(args)
	if err := root.Execute(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return out.String()
}

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
	var meta studySynthMeta
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
	m, err := surface.Load(filepath.Join(out, "window-model.json"))
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
	// windowFromModel: trained points, and interpolation in log2 R.
	for _, c := range m.Surfaces[0].Cuts {
		w, err := windowFromModel(filepath.Join(out, "window-model.json"), 8, c.T)
		if err != nil || w != c.W {
			t.Errorf("R=8 T=%d: %d, %v; want %d", c.T, w, err, c.W)
		}
	}
	w8, _ := m.Window(8, 1600)
	w32, _ := m.Window(32, 1600)
	w16, err := windowFromModel(filepath.Join(out, "window-model.json"), 16, 1600)
	if err != nil || w16 < min(w8, w32) || w16 > max(w8, w32) {
		t.Errorf("R=16: %d, %v; between %d and %d", w16, err, w8, w32)
	}
	if n, err := tasksInTrace(filepath.Join(tr, "T1900_R8.trace.gz")); err != nil || n != 1900 {
		t.Errorf("tasksInTrace: %d, %v", n, err)
	}
	if _, err := windowFromModel(filepath.Join(out, "points.csv"), 8, 1000); err == nil {
		t.Error("a CSV read as a model")
	}
}

func TestStudyReproduceSmall(t *testing.T) {
	dir := t.TempDir()
	studyRun(t, "reproduce", "-o", dir, "--train-subsets", "2", "--validation-subsets", "1", "--sizes", "1000,1500,2000",
		"--cluster-sizes", "8,64", "--max-samples", "200000", "--windows", "1000:20000:1000", "--keep-traces")
	rep, err := os.ReadFile(filepath.Join(dir, "REPORT.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Average prediction hit-rate", "| 2000 |", "R=64", "differs from the paper"} {
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
	in, err := studyReadMeta(filepath.Join(dir, "traces", "t1_T2000_R008.meta.json"))
	if err != nil || in.T < 2000 || in.T > 2025 {
		t.Fatalf("%+v %v", in, err)
	}
}
