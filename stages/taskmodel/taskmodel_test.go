package taskmodel

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models/eiger"
	"github.com/tracecast/tracecast/models/modelio"
	"github.com/tracecast/tracecast/parsers/paje"
	"github.com/tracecast/tracecast/stages/tasks"
)

var update = flag.Bool("update", false, "rewrite testdata/tasks/*.model.json")

const (
	demoTrace = "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"
	golden    = "../../testdata/tasks/cholesky-2cpu.duration.model.json"
)

func demoTasks(t *testing.T) []tracecast.Task {
	t.Helper()
	f, err := os.Open(demoTrace)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	o := paje.DefaultOptions()
	o.UserDefined = true
	x := tasks.Extractor{StateType: "Worker State", IDField: tasks.FieldJobID, PerSecond: 1000}
	var ts []tracecast.Task
	if _, err := paje.Read(f, o, func(es []tracecast.Entity) error {
		for i := range es {
			if tk, ok := x.Task("starpu-cholesky-2cpu.trace.gz", &es[i]); ok {
				ts = append(ts, tk)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestGoldenModel: the demo trace's duration models, as fit-model builds
// them with its defaults (per codelet and worker kind, threshold 0.01,
// one cluster, 5 folds), are the golden file the sample pipeline serves
// (-update rewrites it).
func TestGoldenModel(t *testing.T) {
	ts := demoTasks(t)
	var b bytes.Buffer
	for _, tk := range ts {
		line, _ := json.Marshal(tk)
		b.Write(append(line, '\n'))
	}
	path := filepath.Join(t.TempDir(), "tasks.jsonl")
	os.WriteFile(path, b.Bytes(), 0o644)
	tt, err := modelio.ReadTaskTable(path)
	if err != nil {
		t.Fatal(err)
	}
	pool, _ := eiger.ParsePool("")
	f, err := eiger.FitGroups(tt.Table, eiger.Spec{Target: "duration_s", GroupBy: []string{"codelet", "worker_kind"},
		Options: eiger.Options{Threshold: eiger.DefaultThreshold, Clusters: 1, Pool: pool, Seed: 1}, Folds: 5,
		SizeColumn: "Size", FootprintColumn: "footprint"})
	if err != nil {
		t.Fatal(err)
	}
	f.Source = "tracecast tasks pipelines/testdata/starpu-cholesky-2cpu.trace.gz"
	out := filepath.Join(t.TempDir(), "model.json")
	if err := modelio.WriteTaskModel(out, f); err != nil {
		t.Fatal(err)
	}
	got, _ := os.ReadFile(out)
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./stages/taskmodel -run TestGoldenModel -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("the demo trace's models differ from %s (rerun with -update if the change is meant)", golden)
	}
}

// TestPredictor: every demo task gets the prediction predict-task would
// give, models are published one per group, and a task of an unknown
// codelet or lacking a parameter gets none.
func TestPredictor(t *testing.T) {
	f, err := modelio.ReadTaskModel(golden)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPredictor(f)
	if err != nil {
		t.Fatal(err)
	}
	ts := demoTasks(t)
	ts = append(ts, tracecast.Task{Codelet: "NOPE", WorkerKind: "CPU"})
	p.Predict(ts)
	if p.Stats.Predicted != len(ts)-1 || p.Stats.NoModel != 1 {
		t.Errorf("stats %+v", p.Stats)
	}
	for _, tk := range ts[:len(ts)-1] {
		g, err := f.Find(map[string]string{"codelet": tk.Codelet, "worker_kind": tk.WorkerKind})
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := g.Model.Predict(tk.Params)
		if err != nil || tk.PredictedDurationS == nil || *tk.PredictedDurationS != want || tk.PredictedEnergyJ != nil {
			t.Fatalf("%+v: want %g (%v)", tk, want, err)
		}
	}
	// A GEMM without parameters: its model needs some.
	bare := []tracecast.Task{{Codelet: "GEMM", WorkerKind: "CPU"}}
	p.Predict(bare)
	gm, _ := f.Find(map[string]string{"codelet": "GEMM", "worker_kind": "CPU"})
	if len(gm.Model.Required()) > 0 && (bare[0].PredictedDurationS != nil || p.Stats.Failed != 1) {
		t.Errorf("a GEMM without parameters predicted: %+v %+v", bare[0], p.Stats)
	}
	recs, err := p.Records(time.Unix(0, 0))
	if err != nil || len(recs) != 4 || recs[0].ID != "duration_s/GEMM/CPU" || recs[0].N != 1140 {
		t.Fatalf("%v %+v", err, recs)
	}
	var m struct {
		Key   map[string]string
		Model eiger.Model
	}
	if err := json.Unmarshal(recs[0].Model, &m); err != nil || m.Key["codelet"] != "GEMM" || m.Model.Restore() != nil {
		t.Errorf("published model %s: %v", recs[0].Model, err)
	}
	// Models of another target or grouping cannot serve tasks.
	bad := *f
	bad.Target = "GFlop"
	if _, err := NewPredictor(&bad); err == nil {
		t.Error("a GFlop model served tasks")
	}
	bad = *f
	bad.GroupBy = []string{"app"}
	if _, err := NewPredictor(&bad); err == nil {
		t.Error("models grouped by app served tasks")
	}
}
