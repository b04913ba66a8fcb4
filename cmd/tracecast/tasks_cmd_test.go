package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
)

const demoTraceFile = "../../pipelines/testdata/starpu-cholesky-2cpu.trace.gz"

func TestTasksCLI(t *testing.T) {
	dir := t.TempDir()
	// JSON lines on standard output, two runs at once.
	copyTrace := filepath.Join(dir, "again.trace.gz")
	data, err := os.ReadFile(demoTraceFile)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(copyTrace, data, 0o644)
	r := run(t, nil, "tasks", demoTraceFile, copyTrace)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	runs := map[string]int{}
	codelets := map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct {
			Run, Codelet string
			DurationS    float64  `json:"duration_s"`
			EnergyJ      *float64 `json:"energy_j"`
			Params       map[string]float64
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		runs[rec.Run]++
		codelets[rec.Codelet]++
		if rec.EnergyJ != nil || rec.DurationS <= 0 || rec.Params["Size"] == 0 {
			t.Fatalf("record %s", line)
		}
	}
	if runs[demoTraceFile] != 1540 || runs[copyTrace] != 1540 || codelets["GEMM"] != 2280 {
		t.Errorf("runs %v codelets %v", runs, codelets)
	}
	if !strings.Contains(r.stderr, "3080 tasks from 2 trace(s)") || !strings.Contains(r.stderr, "GEMM (CPU)") {
		t.Errorf("summary: %s", r.stderr)
	}

	// Arrow, with energy.
	arrowFile := filepath.Join(dir, "tasks.arrow")
	r = run(t, nil, "tasks", demoTraceFile, "--power", "../../testdata/power/cholesky-2cpu.watts.csv.gz", "-o", arrowFile)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	fh, err := os.Open(arrowFile)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	ar, err := ipc.NewFileReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	md := ar.Schema().Metadata()
	if i := md.FindKey("tracecast.schema"); i < 0 || md.Values()[i] != "tracecast.task/1" {
		t.Errorf("schema metadata %v", md)
	}
	rows, sum := 0, 0.0
	for i := 0; i < ar.NumRecords(); i++ {
		rec, err := ar.Record(i)
		if err != nil {
			t.Fatal(err)
		}
		e := rec.Column(ar.Schema().FieldIndices("energy_j")[0]).(*array.Float64)
		p := rec.Column(ar.Schema().FieldIndices("params")[0]).(*array.String)
		for k := 0; k < int(rec.NumRows()); k++ {
			if e.IsNull(k) {
				t.Fatalf("row %d: no energy", rows+k)
			}
			sum += e.Value(k)
			var params map[string]float64
			if err := json.Unmarshal([]byte(p.Value(k)), &params); err != nil || params["h0_nx"] != 240 {
				t.Fatalf("params %q: %v", p.Value(k), err)
			}
		}
		rows += int(rec.NumRows())
	}
	// The compute-class energy of the demo run with this meter (the energy
	// stage's attribution; 844.52 J exactly from the ground truth).
	if rows != 1540 || sum < 843.5 || sum > 845.5 {
		t.Errorf("%d rows, %.3f J", rows, sum)
	}
	if !strings.Contains(r.stderr, "mean mJ") {
		t.Errorf("summary: %s", r.stderr)
	}

	// CSV: one column per parameter.
	csvFile := filepath.Join(dir, "tasks.csv")
	r = run(t, nil, "tasks", demoTraceFile, "-o", csvFile)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	fc, _ := os.Open(csvFile)
	defer fc.Close()
	table, err := csv.NewReader(fc).ReadAll()
	if err != nil || len(table) != 1541 {
		t.Fatalf("%d rows: %v", len(table), err)
	}
	col := map[string]int{}
	for i, h := range table[0] {
		col[h] = i
	}
	for _, h := range []string{"codelet", "duration_s", "Size", "h0_nx", "h2_elemsize", "Priority"} {
		if _, ok := col[h]; !ok {
			t.Errorf("no column %s in %v", h, table[0])
		}
	}
	if d, err := strconv.ParseFloat(table[1][col["duration_s"]], 64); err != nil || d <= 0 {
		t.Errorf("duration %q", table[1][col["duration_s"]])
	}
}

func TestTasksCLIErrors(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.trace")
	os.WriteFile(bad, []byte("%EventDef PajeDefineContainerType 1\n%\tAlias string\n%\tType string\n%\tName string\n%EndEventDef\n1 W 0 \"Worker\"\n9 oops\n"), 0o644)
	for _, c := range []struct {
		args []string
		code int
		msg  string
	}{
		{[]string{"tasks"}, 2, "requires at least 1 arg"},
		{[]string{"tasks", demoTraceFile, "--power", "a", "--power", "b"}, 2, "2 --power for 1 traces"},
		{[]string{"tasks", demoTraceFile, "--format", "arrow"}, 2, "needs -o"},
		{[]string{"tasks", demoTraceFile, "--format", "xml"}, 2, "unknown --format"},
		{[]string{"tasks", demoTraceFile, "-o", demoTraceFile, "--format", "csv"}, 2, ""},
		{[]string{"tasks", bad}, 1, bad + ":7:"},
		{[]string{"tasks", filepath.Join(dir, "missing.trace")}, 1, "missing.trace"},
	} {
		r := run(t, nil, c.args...)
		if r.code != c.code || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want %d and %q", c.args, r.code, r.stderr, c.code, c.msg)
		}
	}
}
