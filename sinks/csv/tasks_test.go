package csv

import (
	"bytes"
	"encoding/csv"
	"slices"
	"testing"

	"github.com/tracecast/tracecast"
)

func TestWriteTasks(t *testing.T) {
	e := 0.125
	ts := []tracecast.Task{
		{ID: "a,b.trace/7", Run: "a,b.trace", Codelet: "GEMM", Worker: "CPU0", WorkerKind: "CPU", JobID: "7", Footprint: "3d24f508", StartS: 0.5, DurationS: 0.01,
			EnergyJ: &e, Params: map[string]float64{"Size": 691200, "h0_nx": 240}},
		{ID: "a,b.trace/8", Run: "a,b.trace", Codelet: "POTRF", Worker: "CPU1", WorkerKind: "CPU", JobID: "8", StartS: 1, DurationS: 1e-7,
			Params: map[string]float64{"Size": 230400, "Priority": -1}},
	}
	var b bytes.Buffer
	if err := WriteTasks(&b, ts); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		append(slices.Clone(TaskHeader), "Priority", "Size", "h0_nx"),
		{"a,b.trace/7", "a,b.trace", "GEMM", "CPU0", "CPU", "7", "3d24f508", "0.5", "0.01", "0.125", "", "", "", "691200", "240"},
		{"a,b.trace/8", "a,b.trace", "POTRF", "CPU1", "CPU", "8", "", "1", "0.0000001", "", "", "", "-1", "230400", ""},
	}
	if len(rows) != len(want) {
		t.Fatalf("rows %q", rows)
	}
	for i := range want {
		if !slices.Equal(rows[i], want[i]) {
			t.Errorf("row %d: %q, want %q", i, rows[i], want[i])
		}
	}
}
