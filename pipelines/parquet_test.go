package pipelines

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecast/tracecast/internal/duckdbtest"
)

// stateTime is the time spent in each state value and the number of
// states, as tracecast's demo summary computes it from its JSON lines.
type stateTime struct {
	n   int64
	sum float64
}

// statesFromJSONL sums the duration of every State record of a JSON-lines
// entity output per value, keeping the states whose type is typ ("": all).
func statesFromJSONL(t *testing.T, path, typ string) map[string]stateTime {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string]stateTime{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e struct {
			Nature, Type, Value string
			Start, End          float64
		}
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if e.Nature != "State" || (typ != "" && e.Type != typ) {
			continue
		}
		s := out[e.Value]
		s.n++
		s.sum += e.End - e.Start
		out[e.Value] = s
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParquetStateTimesInDuckDB runs a pipeline writing a trace's entities
// as Parquet and as JSON lines, then has DuckDB compute the time spent in
// each state value (a GROUP BY over the Parquet file) and compares it with
// tracecast's own sums over the same run's records. On the 41 MB StarPU
// trace of ../shared (when present) it also compares the file sizes with
// the Arrow file of the same records.
func TestParquetStateTimesInDuckDB(t *testing.T) {
	for _, tc := range []struct {
		name, trace, unit, typ string
		shared                 bool
	}{
		{name: "starpu", trace: "testdata/starpu-cholesky-2cpu.trace.gz", unit: "ms", typ: "Worker State"},
		{name: "smpi", trace: "../testdata/smpi/stencil-16.trace", unit: "s"},
		{name: "starpu-41MB", trace: "../../shared/traces/starpu-1.4.9-generated/cholesky_lws_12cpu_2numa_large/paje.trace.gz", unit: "ms", typ: "Worker State", shared: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := os.Stat(tc.trace); err != nil {
				if tc.shared {
					t.Skipf("the study's real traces are not here (%v): skipping; they live beside the repository in shared/traces", err)
				}
				t.Fatal(err)
			}
			if tc.shared && testing.Short() {
				t.Skip("-short: skipping the 41 MB trace")
			}
			dir := t.TempDir()
			pq, js, arr := filepath.Join(dir, "entities.parquet"), filepath.Join(dir, "entities.jsonl"), filepath.Join(dir, "entities.arrow")
			cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: parquet-duckdb
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, time_unit: %s}}
sinks:
  pq: {type: parquet, inputs: [trace], path: %q, time_unit: %s, row_group_rows: 200000}
  js: {type: jsonl, inputs: [trace], path: %q}
  arrow: {type: arrow, inputs: [trace], path: %q, time_unit: %s}
`, tc.trace, tc.unit, pq, tc.unit, js, arr, tc.unit), "parquet.yaml")
			if err != nil {
				t.Fatal(err)
			}
			if err := Run(t.Context(), cfg, RunOptions{}); err != nil {
				t.Fatal(err)
			}
			want := statesFromJSONL(t, js, tc.typ)
			where := "nature = 'State'"
			if tc.typ != "" {
				where += " AND type = " + duckdbtest.Quote(tc.typ)
			}
			res := duckdbtest.Query(t,
				"SELECT value, count(*), sum(duration) FROM "+duckdbtest.Quote(pq)+" WHERE "+where+" GROUP BY value ORDER BY value",
				"SELECT count(*), count(DISTINCT row_group_id) FROM parquet_metadata("+duckdbtest.Quote(pq)+")",
			)
			if len(res[0].Rows) != len(want) || len(want) == 0 {
				t.Errorf("DuckDB finds %d state values, tracecast %d", len(res[0].Rows), len(want))
			}
			var lines []string
			for _, r := range res[0].Rows {
				value, _ := r[0].(string)
				n, _ := duckdbtest.Float(r[1])
				sum, err := duckdbtest.Float(r[2])
				if err != nil {
					t.Fatal(err)
				}
				w, ok := want[value]
				if !ok || int64(n) != w.n || math.Abs(sum-w.sum) > 1e-9*math.Abs(w.sum) {
					t.Errorf("state %q: DuckDB %v states, %v time; tracecast %d states, %v time", value, n, sum, w.n, w.sum)
				}
				lines = append(lines, fmt.Sprintf("%s %d %.6f", value, int64(n), sum))
			}
			slices.SortFunc(lines, func(a, b string) int { return strings.Compare(a, b) })
			if len(lines) > 8 {
				lines = lines[:8]
			}
			t.Logf("DuckDB = tracecast on %d state values, e.g. %s", len(res[0].Rows), strings.Join(lines, "; "))
			sizes := map[string]int64{}
			for _, p := range []string{pq, js, arr} {
				st, err := os.Stat(p)
				if err != nil {
					t.Fatal(err)
				}
				sizes[filepath.Ext(p)] = st.Size()
			}
			t.Logf("sizes: Parquet %.2f MB (%v row groups), Arrow %.2f MB, JSON lines %.2f MB",
				float64(sizes[".parquet"])/1e6, res[1].Rows[0][1], float64(sizes[".arrow"])/1e6, float64(sizes[".jsonl"])/1e6)
			if sizes[".parquet"]*2 > sizes[".arrow"] {
				t.Errorf("the Parquet file (%d bytes) is not half the Arrow file's size (%d): compression is off?", sizes[".parquet"], sizes[".arrow"])
			}
		})
	}
}
