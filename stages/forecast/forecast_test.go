package forecast_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	fc "github.com/tracecast/tracecast/forecast"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/pipelines"
	"github.com/tracecast/tracecast/pipelines/component"
	fstage "github.com/tracecast/tracecast/stages/forecast"
	"github.com/tracecast/tracecast/stages/signal"
)

// forecasts runs file → paje → forecast on path and returns the forecasts.
func forecasts(t *testing.T, path string, opts map[string]any) []tracecast.Forecast {
	t.Helper()
	var out []tracecast.Forecast
	reg := builtin.Registry()
	component.RegisterSinkValue(reg, "keep", pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if fs, ok := b.Items.([]tracecast.Forecast); ok {
			out = append(out, fs...)
		}
		return nil
	}))
	o := map[string]any{"queries": []string{"idle>=25%", "idle>=1"}, "horizons": []string{"1ms", "10ms", "100ms"}, "every": "2ms", "run_id": "r"}
	for k, v := range opts {
		o[k] = v
	}
	spec := pipelines.Spec{Name: "t",
		Sources: []pipelines.Node{{ID: "trace", Type: "file", Options: map[string]any{"path": path}, Parser: &pipelines.Node{Type: "paje", Options: map[string]any{"ignore_incomplete_links": true}}}},
		Stages:  []pipelines.Node{{ID: "fc", Type: "forecast", Inputs: []string{"trace"}, Options: o}},
		Sinks:   []pipelines.Node{{ID: "keep", Type: "keep", Inputs: []string{"fc"}}}}
	cfg, err := spec.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := pipelines.Run(context.Background(), cfg, pipelines.RunOptions{Registry: reg, Logger: zerolog.Nop(), Embedded: true}); err != nil {
		t.Fatal(err)
	}
	return out
}

func readLines(t *testing.T, path string) [][]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(path) == ".gz" {
		if r, err = gzip.NewReader(f); err != nil {
			t.Fatal(err)
		}
	}
	var lines [][]byte
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		lines = append(lines, append([]byte(nil), sc.Bytes()...))
	}
	return lines
}

// Cutting a time-sorted trace after any event leaves every forecast issued
// before the next event's time unchanged: forecasts are causal, whatever
// the reader's batches.
func TestCutTrace(t *testing.T) {
	for _, tc := range []struct {
		path, unit string
		workers    int
	}{
		{"../../testdata/smpi/jacobi-8.trace.gz", "s", 0},
		{"../../testdata/smpi/jacobi-8.trace.gz", "s", 8},
		{"../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "ms", 0},
		{"../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "ms", 2},
	} {
		t.Run(fmt.Sprintf("%s/workers=%d", filepath.Base(tc.path), tc.workers), func(t *testing.T) {
			opts := map[string]any{"workers": tc.workers}
			full := forecasts(t, tc.path, opts)
			if len(full) < 1000 {
				t.Fatalf("%d forecasts", len(full))
			}
			byID := map[string]tracecast.Forecast{}
			for _, f := range full {
				byID[f.ID] = f
			}
			lines := readLines(t, tc.path)
			var lt paje.LineTimer
			lt.SetUnit(tc.unit)
			type ev struct {
				line int
				t    float64
			}
			var evs []ev
			for i, l := range lines {
				if s, ok := lt.Seconds(l); ok {
					evs = append(evs, ev{i, s})
				}
			}
			dir := t.TempDir()
			for _, c := range []int{len(evs) / 50, len(evs) / 7, len(evs) / 3, len(evs) / 2, 3 * len(evs) / 4, len(evs) - 2} {
				cut := filepath.Join(dir, "cut.trace")
				var b bytes.Buffer
				for _, l := range lines[:evs[c].line+1] {
					b.Write(l)
					b.WriteByte('\n')
				}
				if err := os.WriteFile(cut, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				next := evs[c+1].t
				part := forecasts(t, cut, opts)
				n := 0
				for _, f := range part {
					if f.IssuedAt >= next {
						continue
					}
					n++
					if g, ok := byID[f.ID]; !ok || !fc.Same(g, f) {
						t.Fatalf("cut after line %d (t=%g s): %+v\nfull trace: %+v", evs[c].line+1, evs[c].t, f, g)
					}
				}
				if n == 0 && c > len(evs)/10 {
					t.Fatalf("cut after line %d: no forecast to compare", evs[c].line+1)
				}
			}
		})
	}
}

// The steps a verification scores against are the offline signal's (every
// selected container counted from the first state start, the no-state
// class before its own first state), on StarPU and SMPI traces.
func TestStepsMatchOfflineSignal(t *testing.T) {
	for _, tc := range []struct{ path, rules string }{
		{"../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz", "starpu"},
		{"../../testdata/smpi/jacobi-8.trace.gz", "smpi"},
	} {
		s := fstage.NewStepsSink("auto", "idle", "", 0)
		reg := builtin.Registry()
		component.RegisterSinkValue(reg, "steps", s)
		spec := pipelines.Spec{Name: "t",
			Sources: []pipelines.Node{{ID: "trace", Type: "file", Options: map[string]any{"path": tc.path}, Parser: &pipelines.Node{Type: "paje"}}},
			Sinks:   []pipelines.Node{{ID: "steps", Type: "steps", Inputs: []string{"trace"}}}}
		cfg, err := spec.Config()
		if err != nil {
			t.Fatal(err)
		}
		if err := pipelines.Run(context.Background(), cfg, pipelines.RunOptions{Registry: reg, Logger: zerolog.Nop(), Embedded: true}); err != nil {
			t.Fatal(err)
		}
		got, err := s.Steps()
		if err != nil {
			t.Fatal(err)
		}
		rules := signal.Presets[tc.rules]()
		if err := rules.Compile(); err != nil {
			t.Fatal(err)
		}
		b := signal.NewBuilder(rules)
		f, err := os.Open(tc.path)
		if err != nil {
			t.Fatal(err)
		}
		opts := paje.DefaultOptions()
		if _, err := paje.Read(f, opts, func(es []tracecast.Entity) error { b.Add(es); return nil }); err != nil {
			t.Fatal(err)
		}
		f.Close()
		sig, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		scale := map[string]float64{"starpu": 1e-3, "smpi": 1}[tc.rules]
		// Offline steps change on any class; ours on the idle count only:
		// compare the functions at every change of either.
		at := func(t float64) (int, int) {
			i := sort.SearchFloat64s(got.T, t*(1+1e-12)) - 1
			return got.X[max(i, 0)], got.R[max(i, 0)]
		}
		if math.Abs(got.T[0]-sig.Steps[0].T*scale) > 1e-12 {
			t.Fatalf("%s: starts at %g, offline %g", tc.path, got.T[0], sig.Steps[0].T*scale)
		}
		for i, st := range sig.Steps {
			if x, r := at(st.T * scale); x != int(st.Count[signal.Idle]) || r != sig.R {
				t.Fatalf("%s offline step %d at %g: %d of %d idle, ours %d of %d", tc.path, i, st.T*scale, st.Count[signal.Idle], sig.R, x, r)
			}
		}
		for i, tt := range got.T {
			if x := sig.At(tt / scale * (1 + 1e-12))[signal.Idle]; int(x) != got.X[i] {
				t.Fatalf("%s step %d at %g: %d idle, offline %d", tc.path, i, tt, got.X[i], x)
			}
		}
		if math.Abs(got.End-sig.End*scale) > 1e-12 {
			t.Fatalf("%s: end %g, offline %g", tc.path, got.End, sig.End*scale)
		}
	}
}

func TestDefaultHorizonsAndRunID(t *testing.T) {
	if got := fstage.DefaultHorizons(5.29); fmt.Sprint(got) != "[5ms 50ms 500ms]" {
		t.Errorf("5.29 s run: %v", got)
	}
	if got := fstage.DefaultHorizons(0.0123); fmt.Sprint(got) != "[10us 100us 1ms]" {
		t.Errorf("12.3 ms run: %v", got)
	}
	// A 0.2 ms run: the shortest horizons are raised to 10 µs, so that
	// their cadence (a tenth) is allowed.
	if got := fstage.DefaultHorizons(0.0002); fmt.Sprint(got) != "[10us 20us]" {
		t.Errorf("0.2 ms run: %v", got)
	}
	a, err := fstage.RunIDOf("../../testdata/smpi/jacobi-8.trace.gz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := fstage.RunIDOf("../../testdata/smpi/dynfarm-16.trace.gz")
	if a == b || !strings.HasPrefix(a, "smpi/jacobi-8-") || len(a) != len("smpi/jacobi-8-")+8 {
		t.Errorf("run ids %q %q", a, b)
	}
	if _, err := fstage.RunIDOf("/nonexistent"); err == nil {
		t.Error("no error for a missing file")
	}
	// A stream's default: a whole file's is the file's; a tailed file's
	// or a Kafka key's is its name.
	if got := fstage.StreamRunID("../../testdata/smpi/jacobi-8.trace.gz", true); got != a {
		t.Errorf("whole file: %q, want %q", got, a)
	}
	if got := fstage.StreamRunID("../../testdata/smpi/jacobi-8.trace.gz", false); got != "smpi/jacobi-8.trace" {
		t.Errorf("tailed file: %q", got)
	}
	if got := fstage.StreamRunID("runs/job-7", true); got != "runs/job-7" {
		t.Errorf("not a file: %q", got)
	}
	if got := fstage.StreamRunID("stdin", false); got != "stdin" {
		t.Errorf("standard input: %q", got)
	}
}

// TestRecordsLeaveInBatches: one input batch spans many issue times; the
// stage hands its records on in batches of at most spillAt as they come,
// instead of holding all of an input batch's (with --horizon 100us, 513 MB
// on the 2-CPU cholesky trace; 24 GB and more with shorter ones).
func TestRecordsLeaveInBatches(t *testing.T) {
	reg := builtin.Registry()
	largest, forecasts := 0, 0
	component.RegisterSinkValue(reg, "keep", pipelines.SinkFunc(func(_ context.Context, b tracecast.Batch) error {
		if fs, ok := b.Items.([]tracecast.Forecast); ok {
			forecasts += len(fs)
			largest = max(largest, len(fs))
		}
		return nil
	}))
	spec := pipelines.Spec{Name: "t",
		Sources: []pipelines.Node{{ID: "trace", Type: "file", Options: map[string]any{"path": "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"}, Parser: &pipelines.Node{Type: "paje"}}},
		Stages: []pipelines.Node{{ID: "fc", Type: "forecast", Inputs: []string{"trace"},
			Options: map[string]any{"queries": []string{"idle>=25%", "idle>=1"}, "horizons": []string{"1ms"}, "every": "50us", "method": "persistence"}}},
		Sinks: []pipelines.Node{{ID: "keep", Type: "keep", Inputs: []string{"fc"}}}}
	cfg, err := spec.Config()
	if err != nil {
		t.Fatal(err)
	}
	if err := pipelines.Run(t.Context(), cfg, pipelines.RunOptions{Registry: reg, Logger: zerolog.Nop(), Embedded: true}); err != nil {
		t.Fatal(err)
	}
	if forecasts < 20*4096 {
		t.Fatalf("%d forecasts: too few to show the batching", forecasts)
	}
	if largest > 4096 {
		t.Errorf("a batch of %d forecasts: the stage held them all", largest)
	}
}

// A first-pass sink (FirstOnly) stops sweeping once the first instant has
// passed, yet finds the same start, R and end as a full one, containers
// whose first state comes later included.
func TestFirstOnlyCountsLateContainers(t *testing.T) {
	st := func(c string, a, b float64, v string) tracecast.Entity {
		return tracecast.Entity{Nature: tracecast.NatureState, Container: c, Type: "Worker State", Start: a, End: b, Value: v}
	}
	batches := []tracecast.Batch{
		{Items: []tracecast.Entity{st("A", 0, 10, "Sleeping")}, Watermark: 5},
		{Items: []tracecast.Entity{st("A", 10, 20, "GEMM")}, Watermark: 15},
		{Items: []tracecast.Entity{st("B", 12, 30, "Sleeping"), st("A", 20, 25, "GEMM")}, Watermark: 22},
		{Items: []tracecast.Entity{st("C", 40, 50, "GEMM")}, Watermark: 45},
	}
	run := func(s *fstage.StepsSink) *fc.Steps {
		for _, b := range batches {
			b.Items = slices.Clone(b.Items.([]tracecast.Entity))
			if err := s.Write(context.Background(), b); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, err := s.Steps()
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	full := run(fstage.NewStepsSink("starpu", "idle", "ms", 0))
	first := run(fstage.NewStepsSink("starpu", "idle", "ms", 0).FirstOnly())
	if first.T[0] != full.T[0] || first.X[0] != full.X[0] || first.R[0] != full.R[0] || first.End != full.End || first.Selected != full.Selected {
		t.Fatalf("first pass: start %g, %d of %d idle, end %g, %d selected; full: %g, %d of %d, %g, %d",
			first.T[0], first.X[0], first.R[0], first.End, first.Selected, full.T[0], full.X[0], full.R[0], full.End, full.Selected)
	}
	if full.Selected != 3 || full.End != 0.05 {
		t.Fatalf("full: %d selected, end %g; want 3 and 0.05", full.Selected, full.End)
	}
}

// The held tail swept in slices at the stream's end gives the forecasts
// one sweep gives: the same records, in the same order (forecasts only).
func TestFlushSlices(t *testing.T) {
	trace := "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"
	defer func(n int) { *fstage.FlushSlices = n }(*fstage.FlushSlices)
	*fstage.FlushSlices = 1
	whole := forecasts(t, trace, nil)
	*fstage.FlushSlices = 32
	sliced := forecasts(t, trace, nil)
	if len(whole) == 0 || len(sliced) != len(whole) {
		t.Fatalf("%d forecasts in slices, %d at once", len(sliced), len(whole))
	}
	for i := range whole {
		same := func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) }
		if a, b := whole[i], sliced[i]; a.ID != b.ID || !same(a.P, b.P) || !same(a.Lo, b.Lo) || !same(a.Hi, b.Hi) {
			t.Fatalf("forecast %d: %+v in slices, %+v at once", i, b, a)
		}
	}
}
