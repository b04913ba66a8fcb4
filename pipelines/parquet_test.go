package pipelines

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	arrowlib "github.com/apache/arrow/go/v15/arrow"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/internal/duckdbtest"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/sinks/arrow"
	"github.com/tracecast/tracecast/sinks/parquet"
	"github.com/tracecast/tracecast/stats/ks"
	"github.com/tracecast/tracecast/study"
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
			if tc.shared && (testing.Short() || raceEnabled()) {
				t.Skip("-short or -race: skipping the 41 MB trace")
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

// duckType is the DuckDB type of an Arrow column of the record tables.
func duckType(dt arrowlib.DataType) string {
	switch dt.ID() {
	case arrowlib.STRING:
		return "VARCHAR"
	case arrowlib.FLOAT64:
		return "DOUBLE"
	case arrowlib.INT64:
		return "BIGINT"
	case arrowlib.INT32:
		return "INTEGER"
	case arrowlib.BOOL:
		return "BOOLEAN"
	case arrowlib.TIMESTAMP:
		return "TIMESTAMPTZ"
	}
	return "?" + dt.String()
}

// TestParquetEqualsJSON: one record contract — a pipeline writes every
// record type of a StarPU run (entities, signal samples, windows,
// predictions, verdicts, alerts, forecasts, outcomes, episodes, skills,
// energy rows, power samples; and the hitrate and ks commands' records)
// both as Parquet files and as JSON lines, and
// DuckDB finds the same rows in both, nulls included (a first window's d,
// p and hit, energy totals' window, instantaneous power's since, rolling
// skill records' end, ...).
// (No empty forecast interval or open episode's end happens here:
// sinks/arrow's TestAbsentIsNull covers them.)
// Entities' JSON leaves out the fields that do not apply to their nature,
// which Parquet holds as pj_dump does (end = start and duration 0 for
// events, imbrication 0 and value "" where they do not apply): the query
// maps them.
func TestParquetEqualsJSON(t *testing.T) {
	dir := t.TempDir()
	js := filepath.Join(dir, "records.jsonl")
	var sinks strings.Builder
	tables := map[string]arrow.Table{}
	for _, table := range arrow.RecordTables("ms") {
		rt, _ := tracecast.RecordTypeOf(reflect.MakeSlice(table.ItemsType(), 0, 0).Interface())
		tables[rt.Name] = table
		if rt.Name == "hitrate" || rt.Name == "kstest" {
			continue // the study's records: written below, as their commands write them
		}
		fmt.Fprintf(&sinks, "  pq-%s: {type: parquet, inputs: [trace, idle, fc, sig, energy, power, watts, tm, bf], records: %s, path: %q, time_unit: ms}\n",
			rt.Plural, rt.Plural, filepath.Join(dir, rt.Name+".parquet"))
	}
	cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: parquet-json
settings: {status_interval: 0s}
sources:
  trace: {type: file, path: %q, parser: {type: paje, time_unit: ms, user_defined: true}}
  power: {type: file, path: %q, parser: {type: power, format: rapl}}
  watts: {type: file, path: %q, parser: {type: power, format: csv}}
stages:
  idle: {type: predict, inputs: [trace], rules: starpu, class: idle, period: 1, window: 100, queries: ["idle>=50%%", "idle>=100%%"], time_unit: ms}
  fc: {type: forecast, inputs: [trace], rules: starpu, queries: ["idle>=50%%"], horizons: [100ms], skill_every: 1s, explain: true, time_unit: ms}
  sig: {type: signal, inputs: [trace], rules: starpu, class: idle, period: 1}
  energy: {type: energy, inputs: [trace, power], window: 0.5}
  tk: {type: tasks, inputs: [trace]}
  tm: {type: taskmodel, inputs: [tk], model: %q}
  bf: {type: backfill, inputs: [trace], rules: starpu, tasks: [1ms], mode: kill, alphas: [1], policies: [greedy, forecast], spells: [1ms], every: 50ms, time_unit: ms}
sinks:
  jsonl: {type: jsonl, inputs: [trace, idle, fc, sig, energy, power, watts, tm, bf], path: %q}
  sweep: {type: sweep, inputs: [sig]}
%s`, filepath.Join("testdata", "starpu-cholesky-2cpu.trace.gz"), filepath.Join("..", "testdata", "power", "cholesky-2cpu.rapl.csv.gz"),
		filepath.Join("..", "testdata", "power", "cholesky-2cpu.watts.csv.gz"), filepath.Join("..", "testdata", "tasks", "cholesky-2cpu.duration.model.json"),
		js, sinks.String()), "parquet-json.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// The hitrate command's sweep (a window size never compared: a null
	// hit_rate).
	h := &study.Hitrates{Trace: "run&1", Windows: []int{100, 1 << 30}, Method: ks.Matlab, Alpha: 0.05}
	reg := builtin.Registry()
	component.RegisterSinkValue(reg, "sweep", h)
	if err := Run(t.Context(), cfg, RunOptions{Registry: reg}); err != nil {
		t.Fatal(err)
	}
	// The study's records: JSON lines as hitrate and ks print them, Parquet
	// through the parquet sink.
	jf, err := os.OpenFile(js, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	ksRes := ks.TestSamples([]int{0, 1, 1, 2}, []int{5, 6, 5}, ks.Matlab, 0.05)
	if err := errors.Join(h.WriteResults(jf, false), ksRes.WriteJSON(jf, 0.05), jf.Close()); err != nil {
		t.Fatal(err)
	}
	hrs, err := h.Records()
	if err != nil {
		t.Fatal(err)
	}
	for name, items := range map[string]any{"hitrate": hrs, "kstest": []tracecast.KSTest{ksRes.Record(0.05)}} {
		s, err := parquet.New(parquet.Options{Path: filepath.Join(dir, name+".parquet"), Tables: arrow.RecordTables("ms")})
		if err != nil {
			t.Fatal(err)
		}
		if err := errors.Join(s.Write(t.Context(), tracecast.Batch{Items: items}), s.Close(t.Context())); err != nil {
			t.Fatal(err)
		}
	}
	// One file per record type: DuckDB casts every line of a file to the
	// columns asked for, and "value" is a string in entities, a number in
	// alerts.
	data, err := os.ReadFile(js)
	if err != nil {
		t.Fatal(err)
	}
	split := map[string][]byte{}
	for line := range strings.Lines(string(data)) {
		var r struct{ Record string }
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		split[r.Record] = append(split[r.Record], line...)
	}
	for name, lines := range split {
		if err := os.WriteFile(filepath.Join(dir, name+".jsonl"), lines, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	names := slices.Sorted(maps.Keys(tables))
	var queries []string
	for _, name := range names {
		var cols, jcols, types []string
		types = append(types, "record: 'VARCHAR'")
		for _, f := range tables[name].Schema().Fields() {
			q := `"` + f.Name + `"`
			cols = append(cols, q)
			types = append(types, fmt.Sprintf("%s: '%s'", q, duckType(f.Type)))
			j := q
			if name == "entity" {
				switch f.Name {
				case "end":
					j = `coalesce("end", start)`
				case "duration":
					j = "coalesce(duration, 0)"
				case "imbrication":
					j = "coalesce(imbrication, 0)"
				case "value":
					j = "coalesce(value, '')"
				case "extra":
					j = "extra::VARCHAR"
					types[len(types)-1] = `"extra": 'JSON'`
				}
			}
			jcols = append(jcols, j)
		}
		pq := "read_parquet(" + duckdbtest.Quote(filepath.Join(dir, name+".parquet")) + ")"
		jl := fmt.Sprintf("(SELECT %s FROM read_json(%s, format = 'newline_delimited', columns = {%s}) WHERE record = '%s')",
			strings.Join(jcols, ", "), duckdbtest.Quote(filepath.Join(dir, name+".jsonl")), strings.Join(types, ", "), name)
		c := strings.Join(cols, ", ")
		queries = append(queries, fmt.Sprintf(`SELECT '%s', (SELECT count(*) FROM %s), (SELECT count(*) FROM %s),
  (SELECT count(*) FROM (SELECT %s FROM %s EXCEPT ALL SELECT * FROM %s)),
  (SELECT count(*) FROM (SELECT * FROM %s EXCEPT ALL SELECT %s FROM %s)),
  (SELECT count(*) FROM %s WHERE %s)`, name, pq, jl, c, pq, jl, jl, c, pq, pq, nullCheck(name)))
	}
	for i, r := range duckdbtest.Query(t, queries...) {
		row := r.Rows[0]
		t.Logf("%s: %v rows in Parquet, %v in JSON; %v only in Parquet, %v only in JSON; %v with nulls checked", row[0], row[1], row[2], row[3], row[4], row[5])
		if n, _ := duckdbtest.Float(row[1]); n == 0 || row[1] != row[2] || row[3] != 0.0 || row[4] != 0.0 {
			t.Errorf("%s: Parquet and JSON lines differ: %v", names[i], row)
		}
		if names[i] == "window" || names[i] == "energy" || names[i] == "power" || names[i] == "hitrate" || names[i] == "skill" {
			if n, _ := duckdbtest.Float(row[5]); n == 0 {
				t.Errorf("%s: no row with the nulls this test checks", names[i])
			}
		}
	}
}

// nullCheck is a condition on the rows whose absent fields are null.
func nullCheck(name string) string {
	switch name {
	case "window":
		return "NOT compared AND d IS NULL AND p IS NULL AND hit IS NULL"
	case "energy":
		return "\"window\" IS NULL"
	case "power":
		return "NOT mean AND since IS NULL"
	case "hitrate":
		return "compared = 0 AND hit_rate IS NULL"
	case "skill":
		return `"end" IS NULL` // the rolling records, while the run is open
	}
	return "false"
}
