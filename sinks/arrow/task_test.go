package arrow

import (
	"path/filepath"
	"testing"

	"github.com/tracecast/tracecast"
)

// TestTaskRecords: the task table's nullable floats and JSON parameter
// column, read back by the independent JavaScript reader.
func TestTaskRecords(t *testing.T) {
	e, p := 0.25, 0.004
	ts := []tracecast.Task{
		{ID: "r/1", Run: "r", Codelet: "GEMM", Worker: "CPU0", WorkerKind: "CPU", JobID: "1", StartS: 0.5, DurationS: 0.01,
			EnergyJ: &e, Params: map[string]float64{"h0_nx": 240, "Size": 691200}, PredictedDurationS: &p},
		{ID: "r/2", Run: "r", Codelet: "POTRF", Worker: "CPU1", WorkerKind: "CPU", JobID: "2", StartS: 0.6, DurationS: 0.002},
		{ID: "r/3", Run: "r", Codelet: "TRSM", Worker: "CPU1", WorkerKind: "CPU", JobID: "3", StartS: 0.7, DurationS: 0.003, Params: map[string]float64{}},
	}
	rt, _ := tracecast.RecordTypeOf(ts)
	path := filepath.Join(t.TempDir(), "tasks.arrow")
	s, err := New(Options{Path: path, Format: FormatFile, Tables: []Table{structTable(rt.Items.Elem(), rt.Schema, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: ts}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	r := arrowCheck(t, path)[0]
	want := []string{"id", "run", "codelet", "worker", "worker_kind", "job_id", "footprint", "start_s", "duration_s", "energy_j", "params",
		"predicted_duration_s", "predicted_energy_j"}
	if len(r.Columns) != len(want) {
		t.Fatalf("columns %v", r.Columns)
	}
	for i, c := range want {
		if r.Columns[i] != c {
			t.Fatalf("columns %v, want %v", r.Columns, want)
		}
	}
	// energy_j: 2 nulls; params: 1 (nil map; an empty one is {}); the
	// predictions: 2 and 3.
	if r.Nulls[9] != 2 || r.Nulls[10] != 1 || r.Nulls[11] != 2 || r.Nulls[12] != 3 || r.Rows != 3 {
		t.Errorf("nulls %v rows %d", r.Nulls, r.Rows)
	}
	if r.First["params"] != `{"Size":691200,"h0_nx":240}` || r.First["energy_j"] != 0.25 || r.Metadata["tracecast.schema"] != "tracecast.task/1" {
		t.Errorf("first row %v metadata %v", r.First, r.Metadata)
	}
}
