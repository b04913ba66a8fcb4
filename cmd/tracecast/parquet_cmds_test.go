package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	arrowlib "github.com/apache/arrow/go/v15/arrow"

	"github.com/tracecast/tracecast/internal/arrowtest"
	"github.com/tracecast/tracecast/internal/duckdbtest"
)

// arrowFileSchema reads an Arrow IPC file's schema and row count.
func arrowFileSchema(t *testing.T, path string) (*arrowlib.Schema, int64) {
	t.Helper()
	s, recs := arrowtest.ReadIPC(t, path)
	return s, arrowtest.NumRows(recs)
}

// parquetFileSchema reads a Parquet file's Arrow schema (its fields from
// the stored Arrow schema, as pyarrow reads them, its metadata from the
// file's key-value metadata) and row count.
func parquetFileSchema(t *testing.T, path string) (*arrowlib.Schema, int64) {
	t.Helper()
	p := arrowtest.ReadParquet(t, path)
	return arrowlib.NewSchema(p.Table.Schema().Fields(), &p.Meta), p.Table.NumRows()
}

// sameSchema says how a Parquet file's fields and tracecast.schema differ
// from an Arrow file's ("" when they do not).
func sameSchema(a, p *arrowlib.Schema) string {
	if a.NumFields() != p.NumFields() {
		return fmt.Sprintf("%d columns, Arrow %d:\n%v\n%v", p.NumFields(), a.NumFields(), p, a)
	}
	for i, f := range a.Fields() {
		g := p.Field(i)
		if f.Name != g.Name || !arrowlib.TypeEqual(f.Type, g.Type) || f.Nullable != g.Nullable {
			return fmt.Sprintf("column %d: %v, Arrow %v", i, g, f)
		}
	}
	meta := func(s *arrowlib.Schema) string {
		md := s.Metadata()
		if i := md.FindKey("tracecast.schema"); i >= 0 {
			return md.Values()[i]
		}
		return ""
	}
	if meta(a) == "" || meta(a) != meta(p) {
		return fmt.Sprintf("tracecast.schema %q, Arrow %q", meta(p), meta(a))
	}
	return ""
}

// TestParquetOutputs: wherever a command writes Arrow, --format parquet
// (or a .parquet -o) writes the same tables as Parquet: same columns,
// types, nullability, schema name and rows.
func TestParquetOutputs(t *testing.T) {
	power := filepath.Join("..", "..", "testdata", "power", "cholesky-2cpu.rapl.csv.gz")
	for _, tc := range []struct {
		name string
		// args writes the format's output under the directory; files
		// are its tables, without extension.
		args  func(dir, format string) []string
		files []string
	}{
		{"tasks", func(dir, format string) []string {
			return []string{"tasks", demoTraceFile, "--power", power, "-o", filepath.Join(dir, "tasks."+format)}
		}, []string{"tasks"}},
		{"tasks --format", func(dir, format string) []string {
			return []string{"tasks", demoTraceFile, "--format", format, "-o", filepath.Join(dir, "tasks."+format)}
		}, []string{"tasks"}},
		{"predict", func(dir, format string) []string {
			return []string{"predict", "--horizon", "100ms", "--query", "idle>=50%", "--format", format, "-o", dir, demoTraceFile}
		}, []string{"forecasts", "outcomes", "episodes", "skills"}},
		{"predict --window", func(dir, format string) []string {
			return []string{"predict", "--window", "100", "--period", "1", "--query", "idle>=50%", "--format", format, "-o", dir, demoTraceFile}
		}, []string{"windows", "predictions", "verdicts", "alerts"}},
		{"energy", func(dir, format string) []string {
			return []string{"energy", "--trace", demoTraceFile, "--power", power, "--window", "100ms", "--format", format, "-o", dir}
		}, []string{"energy", "totals"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dirs := map[string]string{}
			for _, format := range []string{"arrow", "parquet"} {
				dirs[format] = t.TempDir()
				if r := run(t, nil, tc.args(dirs[format], format)...); r.code != 0 {
					t.Fatalf("%s: exit %d: %s", format, r.code, r.stderr)
				}
			}
			for _, name := range tc.files {
				a, na := arrowFileSchema(t, filepath.Join(dirs["arrow"], name+".arrow"))
				p, np := parquetFileSchema(t, filepath.Join(dirs["parquet"], name+".parquet"))
				if d := sameSchema(a, p); d != "" {
					t.Errorf("%s.parquet: %s", name, d)
				}
				if na != np || na == 0 && name != "alerts" && name != "episodes" {
					t.Errorf("%s: %d Parquet rows, %d Arrow rows", name, np, na)
				}
			}
		})
	}
}

// TestOutputFormatErrors: an output format a command cannot write, or an
// -o extension it does not know, is a usage error — not JSON lines under
// another name.
func TestOutputFormatErrors(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		msg  string
	}{
		{[]string{"tasks", demoTraceFile, "-o", filepath.Join(dir, "tasks.txt")}, "-o " + filepath.Join(dir, "tasks.txt")},
		{[]string{"tasks", demoTraceFile, "-o", filepath.Join(dir, "tasks")}, "extension"},
		{[]string{"tasks", demoTraceFile, "--format", "parquet"}, "needs -o"},
		{[]string{"predict", "--horizon", "100ms", "--format", "parquet", demoTraceFile}, "needs -o"},
		{[]string{"predict", "--horizon", "100ms", "--format", "xml", "-o", dir, demoTraceFile}, "parquet"},
		{[]string{"predict", "--window", "100", "--format", "xml", "-o", dir, demoTraceFile}, "parquet"},
		{[]string{"energy", "--trace", demoTraceFile, "--power", "x", "--format", "xml", "-o", dir}, "parquet"},
	} {
		r := run(t, nil, c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.msg) {
			t.Errorf("%v: exit %d, %q; want 2 and %q", c.args, r.code, r.stderr, c.msg)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "tasks.txt")); err == nil {
		t.Error("tasks.txt was written")
	}
}

// TestTasksParquetDuckDB: DuckDB reads tasks -o FILE.parquet: per codelet
// and worker kind, the count and the summed duration and energy that a
// GROUP BY computes equal the sums over the JSON-lines records of the same
// run.
func TestTasksParquetDuckDB(t *testing.T) {
	power := filepath.Join("..", "..", "testdata", "power", "cholesky-2cpu.rapl.csv.gz")
	out := filepath.Join(t.TempDir(), "tasks.parquet")
	if r := run(t, nil, "tasks", demoTraceFile, "--power", power, "-o", out); r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	r := run(t, nil, "tasks", demoTraceFile, "--power", power)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	type acc struct {
		n      int
		dur, e float64
	}
	want := map[string]*acc{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var rec struct {
			Codelet    string  `json:"codelet"`
			WorkerKind string  `json:"worker_kind"`
			DurationS  float64 `json:"duration_s"`
			EnergyJ    float64 `json:"energy_j"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		k := rec.Codelet + "/" + rec.WorkerKind
		if want[k] == nil {
			want[k] = &acc{}
		}
		want[k].n++
		want[k].dur += rec.DurationS
		want[k].e += rec.EnergyJ
	}
	res := duckdbtest.Query(t,
		"SELECT codelet || '/' || worker_kind, count(*), sum(duration_s), sum(energy_j) FROM "+duckdbtest.Quote(out)+" GROUP BY ALL ORDER BY 1",
		"SELECT decode(value) FROM parquet_kv_metadata("+duckdbtest.Quote(out)+") WHERE decode(key) = 'tracecast.schema'")
	if len(res[0].Rows) != len(want) || len(want) < 4 {
		t.Fatalf("DuckDB groups %v, JSON lines %d groups", res[0].Rows, len(want))
	}
	for _, row := range res[0].Rows {
		k, _ := row[0].(string)
		w := want[k]
		n, _ := duckdbtest.Float(row[1])
		dur, _ := duckdbtest.Float(row[2])
		e, _ := duckdbtest.Float(row[3])
		if w == nil || int(n) != w.n || math.Abs(dur-w.dur) > 1e-9*w.dur || math.Abs(e-w.e) > 1e-9*w.e {
			t.Errorf("%s: DuckDB %v; JSON lines %+v", k, row, w)
		}
	}
	if got := fmt.Sprint(res[1].Rows); got != "[[tracecast.task/1]]" {
		t.Errorf("schema metadata %s", got)
	}
}
