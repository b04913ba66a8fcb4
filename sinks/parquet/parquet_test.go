package parquet

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	arrowlib "github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/memory"
	pq "github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/file"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/arrowtest"
	"github.com/tracecast/tracecast/internal/duckdbtest"
	"github.com/tracecast/tracecast/internal/sinktest"
	"github.com/tracecast/tracecast/sinks/arrow"
)

// entities returns n entities cycling through every nature, at uneven
// times, with repeated values.
func entities(n int) []tracecast.Entity {
	return sinktest.Entities(n, func(i int) (float64, float64, string) {
		return float64(i) * 0.37, float64(i)*0.37 + float64(i%7)/8, fmt.Sprintf("v%d", i%11)
	})
}

// readTable reads a Parquet file back with arrow/go's reader and returns
// its Arrow table, its row groups' lengths and its key-value metadata
// (without ARROW:schema).
func readTable(t *testing.T, path string) (arrowlib.Table, []int64, map[string]string) {
	t.Helper()
	p := arrowtest.ReadParquet(t, path)
	return p.Table, p.Groups, p.Meta.ToMap()
}

// sameFields compares the fields of two schemas (names, types,
// nullability), not the field metadata the Parquet reader adds.
func sameFields(a, b *arrowlib.Schema) bool {
	if a.NumFields() != b.NumFields() {
		return false
	}
	for i, f := range a.Fields() {
		g := b.Field(i)
		if f.Name != g.Name || !arrowlib.TypeEqual(f.Type, g.Type) || f.Nullable != g.Nullable {
			return false
		}
	}
	return true
}

// rows renders a table as one "a|b|..." string per row.
func rows(tbl arrowlib.Table) []string {
	out := make([]string, tbl.NumRows())
	for c := range int(tbl.NumCols()) {
		row := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			for i := range chunk.Len() {
				cell := "null"
				if !chunk.IsNull(i) {
					cell = chunk.ValueStr(i)
				}
				if c > 0 {
					out[row] += "|"
				}
				out[row] += cell
				row++
			}
		}
	}
	return out
}

// TestRoundTrip writes entities in several batches and reads them back
// with arrow/go's Parquet reader: the Arrow schema (metadata included) and
// every value come back, nothing leaks.
func TestRoundTrip(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "out", "entities.parquet")
	s, err := New(Options{Path: path, Tables: arrow.RecordTables("ms"), Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	ents := entities(23)
	sinktest.CommitOnClose(t, s, path, true, ents[:10], []tracecast.Entity{}, ents[10:20], ents[20:])
	if s.Rows() != 23 || s.RowGroups() != 1 {
		t.Errorf("rows %d, row groups %d; want 23 and 1", s.Rows(), s.RowGroups())
	}
	tbl, _, kv := readTable(t, path)
	if !sameFields(tbl.Schema(), arrow.EntitySchema("ms")) {
		t.Errorf("schema\n%v\nwant\n%v", tbl.Schema(), arrow.EntitySchema("ms"))
	}
	if want := arrow.EntitySchema("ms").Metadata().ToMap(); fmt.Sprint(kv) != fmt.Sprint(want) {
		t.Errorf("metadata %v, want %v", kv, want)
	}
	got := rows(tbl)
	if len(got) != len(ents) {
		t.Fatalf("%d rows, want %d", len(got), len(ents))
	}
	for i, e := range ents {
		if want := sinktest.EntityRow(e); got[i] != want {
			t.Errorf("row %d\n got %s\nwant %s", i, got[i], want)
		}
	}
}

// TestRowGroups: a row group ends at RowGroupRows rows or RowGroupBytes
// compressed bytes, also in the middle of a batch.
func TestRowGroups(t *testing.T) {
	tests := []struct {
		name         string
		rows, bytes  int64
		batches      []int
		want         []int64
		wantAtLeast  int // row groups, when the byte bound decides
		wantRowsOnly bool
	}{
		{name: "rows across batches", rows: 100, batches: []int{30, 30, 30, 30, 30, 30, 30, 30, 10}, want: []int64{100, 100, 50}},
		{name: "rows within a batch", rows: 100, batches: []int{250}, want: []int64{100, 100, 50}},
		{name: "exact fill starts no empty group", rows: 50, batches: []int{50, 50}, want: []int64{50, 50}},
		{name: "one group by default", batches: []int{1000, 1000, 1000}, want: []int64{3000}},
		{name: "bytes", bytes: 4 << 10, batches: []int{1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000}, wantAtLeast: 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.parquet")
			s, err := New(Options{Path: path, RowGroupRows: tt.rows, RowGroupBytes: tt.bytes})
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, n := range tt.batches {
				if err := s.Write(t.Context(), tracecast.Batch{Items: entities(n)}); err != nil {
					t.Fatal(err)
				}
				total += n
			}
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			tbl, groups, _ := readTable(t, path)
			if tbl.NumRows() != int64(total) {
				t.Errorf("%d rows, want %d", tbl.NumRows(), total)
			}
			if len(groups) != s.RowGroups() {
				t.Errorf("the file has %d row groups, the sink says %d", len(groups), s.RowGroups())
			}
			if tt.want != nil && fmt.Sprint(groups) != fmt.Sprint(tt.want) {
				t.Errorf("row groups %v, want %v", groups, tt.want)
			}
			if len(groups) < tt.wantAtLeast {
				t.Errorf("row groups %v, want at least %d", groups, tt.wantAtLeast)
			}
		})
	}
}

// heapAfterGC is the live heap.
func heapAfterGC() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// TestMemoryIsBounded writes 600 k entities and measures the live heap
// every 60 k: with 1 MiB row groups it stays under a bound (the pages
// being filled come on top of the row group); with one row group for
// everything (the bound off) it grows with the output, since a row group
// is held in memory until it ends.
func TestMemoryIsBounded(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("writes 600 k entities and measures the heap: not with -short or -race")
	}
	heaps := func(rowGroupBytes int64) ([]float64, int64) {
		batch := entities(6000)
		path := filepath.Join(t.TempDir(), "big.parquet")
		s, err := New(Options{Path: path, RowGroupBytes: rowGroupBytes, RowGroupRows: math.MaxInt64})
		if err != nil {
			t.Fatal(err)
		}
		base := heapAfterGC()
		var mb []float64
		for i := range 100 {
			for j := range batch {
				batch[j].Start += 1000 + float64(j%13)/7
				batch[j].End += 1000 + float64(j%17)/3
			}
			if err := s.Write(t.Context(), tracecast.Batch{Items: batch}); err != nil {
				t.Fatal(err)
			}
			if i%10 == 9 {
				mb = append(mb, (float64(heapAfterGC())-float64(base))/1e6)
			}
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return mb, st.Size()
	}
	bounded, size := heaps(1 << 20)
	unbounded, _ := heaps(math.MaxInt64)
	t.Logf("%.1f MB of Parquet; live heap growth every 60 k rows (MB): %.1f with 1 MiB row groups, %.1f with one row group",
		float64(size)/1e6, bounded, unbounded)
	if m := slices.Max(bounded); m > 16 {
		t.Errorf("with 1 MiB row groups the heap grew by up to %.1f MB, want under 16 MB whatever the length", m)
	}
	// From 120 k to 600 k rows the row group gains 80% of the file.
	if d := unbounded[9] - unbounded[1]; d < 0.6*float64(size)/1e6 {
		t.Errorf("with one row group the heap grew by only %.1f MB from 120 k to 600 k rows for a %.1f MB file: the measure does not see the row group", d, float64(size)/1e6)
	}
}

func TestEmptyOutputHasTheChosenSchema(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "empty.parquet")
	s, err := New(Options{Path: path, Tables: arrow.SinkTables("", "samples"), Allocator: mem})
	if err != nil {
		t.Fatal(err)
	}
	// Meta of an empty first batch still reaches the schema.
	if err := s.Write(t.Context(), tracecast.Batch{Items: []tracecast.Sample{}, Meta: map[string]string{"class": "idle"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	tbl, groups, kv := readTable(t, path)
	if tbl.NumRows() != 0 || len(groups) != 0 {
		t.Errorf("%d rows in %d row groups", tbl.NumRows(), len(groups))
	}
	if !sameFields(tbl.Schema(), arrow.SampleSchema(nil)) {
		t.Errorf("schema %v", tbl.Schema())
	}
	if fmt.Sprint(kv) != "map[class:idle tracecast.schema:tracecast.signal/1]" {
		t.Errorf("metadata %v", kv)
	}
}

func TestErrors(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		opts Options
		want string
	}{
		{"no path", Options{}, "path is empty"},
		{"stdout", Options{Path: "-"}, "standard output is not supported"},
		{"negative rows", Options{Path: filepath.Join(dir, "n"), RowGroupRows: -1}, "negative row group size"},
		{"dir is a file", Options{Path: filepath.Join(blocker, "x")}, "not a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := New(tt.opts); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
	s, err := New(Options{Path: filepath.Join(dir, "x.parquet")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: []string{"a"}}); err == nil || !strings.Contains(err.Error(), "no Arrow schema for items of type []string") {
		t.Errorf("unknown type: err = %v", err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: entities(2)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: []tracecast.Sample{{K: 1}}}); err == nil || !strings.Contains(err.Error(), "this output's schema takes []tracecast.Entity") {
		t.Errorf("mixed types: err = %v", err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: entities(1)}); err == nil {
		t.Error("Write after Close succeeded")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  SinkConfig
		want string // "" for valid
	}{
		{"defaults with a path", SinkConfig{Path: "x.parquet", RowGroupRows: DefaultRowGroupRows, RowGroupBytes: DefaultRowGroupBytes}, ""},
		{"records", SinkConfig{Path: "x.parquet", Records: "forecasts", RowGroupRows: 1, RowGroupBytes: 1}, ""},
		{"no path", SinkConfig{RowGroupRows: 1, RowGroupBytes: 1}, "path: required"},
		{"stdout", SinkConfig{Path: "-", RowGroupRows: 1, RowGroupBytes: 1}, "standard output is not supported"},
		{"zero rows", SinkConfig{Path: "x", RowGroupBytes: 1}, "row_group_rows: 0, want at least 1"},
		{"zero bytes", SinkConfig{Path: "x", RowGroupRows: 1}, "row_group_bytes: 0, want at least 1"},
		{"unknown records", SinkConfig{Path: "x", Records: "nope", RowGroupRows: 1, RowGroupBytes: 1}, `records: "nope" is not one of`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.want == "" && err != nil {
				t.Fatalf("err = %v", err)
			}
			if tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

// TestDuckDBReads: DuckDB reads entity, forecast, prediction and signal
// files: the row counts, the column types (timestamps as UTC timestamps),
// the nulls (an empty forecast interval is null, as in JSON), the values
// and the key-value metadata; snappy by default, zstd and uncompressed
// files hold the same rows.
func TestDuckDBReads(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, tables []arrow.Table, b tracecast.Batch, codec ...Compression) string {
		path := filepath.Join(dir, name)
		opts := Options{Path: path, Tables: tables, RowGroupRows: 1000}
		if len(codec) > 0 {
			opts.Compression = codec[0]
		}
		s, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(t.Context(), b); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		return duckdbtest.Quote(path)
	}
	ents := entities(2500)
	entPath := write("entities.parquet", arrow.RecordTables("s"), tracecast.Batch{Items: ents})
	fcs := []tracecast.Forecast{
		{ID: "r/idle>=25%/10ms/0", Run: "r", Class: "idle", Query: "idle>=25%", Threshold: 3, Workers: 12, IssuedAt: 0.5, Horizon: 0.01,
			P: 0.25, Mean: 0.125, WorkerSeconds: 0.015, Lo: math.NaN(), Hi: math.NaN(), Method: "auto"},
		{ID: "r/idle>=25%/10ms/1", Run: "r", Class: "idle", Query: "idle>=25%", Threshold: 3, Workers: 12, IssuedAt: 0.501, Horizon: 0.01,
			P: 0.5, Mean: 0.25, WorkerSeconds: 0.03, Lo: 0.1, Hi: 0.9, Method: "auto"},
	}
	fcPath := write("forecasts.parquet", arrow.SinkTables("", "forecasts"), tracecast.Batch{Items: fcs})
	at := time.Date(2026, 1, 2, 3, 4, 5, 678000, time.UTC)
	preds := []tracecast.Prediction{{ID: "t/w1/idle>=25%", Trace: "t", Window: 1, Start: 1, End: 2, HorizonS: 0.5, Class: "idle",
		Query: "idle>=25%", AtLeast: 3, R: 12, Likelihood: 0.75, EmittedAt: at}}
	predPath := write("predictions.parquet", arrow.RecordTables("ms"), tracecast.Batch{Items: preds})
	samples := make([]tracecast.Sample, 5000)
	for i := range samples {
		samples[i] = tracecast.Sample{K: int64(i), T: 10 + float64(i)*0.5, X: int32(i % 5)}
	}
	sigPath := write("signal.parquet", arrow.RecordTables(""), tracecast.Batch{Items: samples,
		Meta: map[string]string{"class": "idle", "period": "0.5", "r": "4", "time_unit": "ms"}})
	zstdPath := write("entities-zstd.parquet", arrow.RecordTables("s"), tracecast.Batch{Items: ents}, Zstd)
	rawPath := write("entities-none.parquet", arrow.RecordTables("s"), tracecast.Batch{Items: ents}, Uncompressed)

	res := duckdbtest.Query(t,
		"SELECT count(*), count(number), count(start_container), count(extra), sum(duration) FROM "+entPath,
		"SELECT nature, count(*) FROM "+entPath+" GROUP BY nature ORDER BY nature",
		"SELECT decode(key), decode(value) FROM parquet_kv_metadata("+entPath+") WHERE decode(key) NOT LIKE 'ARROW:%' ORDER BY 1",
		"SELECT id, lo, hi, lo IS NULL, method, workers FROM "+fcPath+" ORDER BY id",
		"SELECT typeof(emitted_at), strftime(emitted_at AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M:%S.%f'), query, likelihood FROM "+predPath,
		"SELECT count(*), sum(x), min(t), max(t), max(k) FROM "+sigPath,
		"SELECT decode(key), decode(value) FROM parquet_kv_metadata("+sigPath+") WHERE decode(key) NOT LIKE 'ARROW:%' ORDER BY 1",
		"SELECT count(DISTINCT row_group_id), any_value(compression) FROM parquet_metadata("+sigPath+")",
		"SELECT name, repetition_type FROM parquet_schema("+entPath+") WHERE name IN ('start', 'number') ORDER BY name",
		"SELECT (SELECT list(DISTINCT compression) FROM parquet_metadata("+zstdPath+")), (SELECT list(DISTINCT compression) FROM parquet_metadata("+rawPath+")), "+
			"(SELECT count(*) FROM (SELECT * FROM "+entPath+" EXCEPT ALL SELECT * FROM "+zstdPath+")), (SELECT count(*) FROM (SELECT * FROM "+entPath+" EXCEPT ALL SELECT * FROM "+rawPath+"))",
	)
	sumDur := 0.0
	for _, e := range ents {
		sumDur += e.End - e.Start
	}
	r := res[0].Rows[0]
	if d, _ := duckdbtest.Float(r[4]); fmt.Sprint(r[:4]) != "[2500 500 500 500]" || math.Abs(d-sumDur) > 1e-9*sumDur {
		t.Errorf("entities: count, count(number), count(start_container), count(extra), sum(duration) = %v, want [2500 500 500 500 %v]", r, sumDur)
	}
	if got := fmt.Sprint(res[1].Rows); got != "[[Container 500] [Event 500] [Link 500] [State 500] [Variable 500]]" {
		t.Errorf("natures: %s", got)
	}
	if got := fmt.Sprint(res[2].Rows); got != "[[time_unit s] [tracecast.schema tracecast.entity/1]]" {
		t.Errorf("entity metadata: %s", got)
	}
	if got := fmt.Sprint(res[3].Rows); got != "[[r/idle>=25%/10ms/0 <nil> <nil> true auto 12] [r/idle>=25%/10ms/1 0.1 0.9 false auto 12]]" {
		t.Errorf("forecasts: %s", got)
	}
	if got := fmt.Sprint(res[4].Rows); got != "[[TIMESTAMP WITH TIME ZONE 2026-01-02 03:04:05.000678 idle>=25% 0.75]]" {
		t.Errorf("predictions: %s", got)
	}
	if got := fmt.Sprint(res[5].Rows); got != "[[5000 10000 10 2509.5 4999]]" {
		t.Errorf("signal: %s", got)
	}
	if got := fmt.Sprint(res[6].Rows); got != "[[class idle] [period 0.5] [r 4] [time_unit ms] [tracecast.schema tracecast.signal/1]]" {
		t.Errorf("signal metadata: %s", got)
	}
	if got := fmt.Sprint(res[7].Rows); got != "[[5 SNAPPY]]" {
		t.Errorf("signal row groups and compression: %s", got)
	}
	if got := fmt.Sprint(res[8].Rows); got != "[[number OPTIONAL] [start REQUIRED]]" {
		t.Errorf("repetition: %s", got)
	}
	if got := fmt.Sprint(res[9].Rows); got != "[[['ZSTD'] ['UNCOMPRESSED'] 0 0]]" {
		t.Errorf("zstd and uncompressed files: codecs and rows not in the snappy file's: %s", got)
	}
}

// TestEveryRecordTable: a record of every record type (nulls included)
// reads back with arrow/go's pqarrow reader — which restores the Arrow
// types from ARROW:schema — with the Arrow schema's fields and the values
// the Arrow sink writes.
func TestEveryRecordTable(t *testing.T) {
	nan := math.NaN()
	at := time.Date(2026, 1, 2, 3, 4, 5, 678000, time.UTC)
	batches := []any{
		entities(10),
		[]tracecast.Sample{{K: 1, T: 2.5, X: 3}},
		[]tracecast.Window{{Trace: "t", Class: "idle", N: 10}, {Trace: "t", Index: 1, N: 10, D: 0.5, P: 0.25, Hit: true, Compared: true}},
		[]tracecast.Prediction{{ID: "p", Query: "idle>=25%", Likelihood: 0.5, EmittedAt: at}, {ID: "q"}},
		[]tracecast.Verdict{{ID: "v", Hit: true, EmittedAt: at}},
		[]tracecast.Alert{{ID: "a", Kind: "regime-change", Value: 3}},
		[]tracecast.Forecast{{ID: "f", Lo: nan, Hi: nan}, {ID: "g", Lo: 0.1, Hi: 0.9}},
		[]tracecast.Outcome{{ID: "o", Inside: true, Lo: nan, Hi: 1}},
		[]tracecast.Episode{{ID: "e", State: "open", End: nan}, {ID: "e/closed", State: "closed", End: 2}},
		[]tracecast.Skill{{ID: "s", N: 3, MSEP: 0.5, SkillKSPaper: nan}, {ID: "s/last", N: 4, MSEP: 0.5, End: tracecast.EndTimeout}},
		[]tracecast.Decision{{ID: "d", Policy: "forecast", Worker: "CPU0", Start: 1, D: 0.01, Mode: "kill", Alpha: 1, Timeout: nan, Outcome: "killed", P: 0.9},
			{ID: "d2", Policy: "oracle", Workers: []byte(`["CPU0","CPU1"]`), Start: 2, D: 0.01, Mode: "wait", Alpha: nan, Timeout: nan, Outcome: "completed", P: nan}},
		[]tracecast.SpellForecast{{ID: "s", Worker: "CPU0", IssuedAt: 1, Elapsed: 0.5, D: 0.01, P: 0.5, Q10: 0.001, Q50: 0.02, Method: "spell"},
			{ID: "s2", Worker: "CPU1", P: 0.5, Q10: nan, Q50: nan, Method: "spell"}},
		[]tracecast.Plan{{ID: "p", Run: "r", Worker: "CPU0", IssuedAt: 1, Event: "idle", SpellStart: 0.5, D: 0.01, Mode: "wait", Alpha: 10, Launch: []byte(`[[0.001,null]]`), P: []byte(`[0.9]`)},
			{ID: "p2", Run: "r", Event: "end", SpellStart: nan, D: 0.01, Mode: "wait", Alpha: 10}},
		[]tracecast.EnergyRow{{Node: "n", Window: -1, EnergyJ: 3}, {Node: "n", Window: 2}},
		[]tracecast.PowerSample{{T: 1, Watts: 90}, {T: 2, Watts: 91, Mean: true, Since: 1}},
		[]tracecast.Task{{ID: "r/1", Run: "r", Codelet: "GEMM", Worker: "CPU0", WorkerKind: "CPU", DurationS: 0.01, Params: map[string]float64{"Size": 4}},
			{ID: "r/2", EnergyJ: ptr(1.5), PredictedDurationS: ptr(0.02)}},
		[]tracecast.TaskModel{{ID: "duration_s/GEMM/CPU", Group: "GEMM/CPU", Target: "duration_s", N: 3, Model: []byte(`{"terms":["1"]}`), EmittedAt: at}},
		[]tracecast.HitRate{{Trace: "t", Window: 100, Compared: 3, Hits: 2, HitRate: 2.0 / 3}, {Trace: "t", Window: 5000, HitRate: nan}},
		[]tracecast.KSTest{{N1: 4, N2: 3, D: 1, DNum: 12, DDen: 12, P: 0.02, Reject: true, Method: "matlab"}},
		[]tracecast.Explanation{{ID: "x", Run: "r", Query: "idle>=1", Horizon: 0.1, Method: "auto", Kind: "expert", Name: "learner", Present: true, N: 9, MSE: 0.02, Weight: 0.2, Coefficient: nan, SD: nan, ImportanceLearner: nan, ImportanceMix: nan},
			{ID: "y", Run: "r", Query: "idle>=1", Horizon: 0.1, Method: "auto", Kind: "feature", Name: "ready_tasks", MSE: nan, Weight: nan, Coefficient: nan, SD: nan, ImportanceLearner: nan, ImportanceMix: nan}},
	}
	if len(batches) != len(arrow.RecordTables("")) {
		t.Fatalf("%d batches for %d record tables", len(batches), len(arrow.RecordTables("")))
	}
	for _, items := range batches {
		rt, _ := tracecast.RecordTypeOf(items)
		t.Run(rt.Name, func(t *testing.T) {
			dir := t.TempDir()
			pqPath := filepath.Join(dir, "x.parquet")
			p, err := New(Options{Path: pqPath, Tables: arrow.RecordTables("ms")})
			if err != nil {
				t.Fatal(err)
			}
			a, err := arrow.New(arrow.Options{Path: filepath.Join(dir, "x.arrow"), Tables: arrow.RecordTables("ms")})
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []tracecast.Sink{p, a} {
				if err := s.Write(t.Context(), tracecast.Batch{Items: items}); err != nil {
					t.Fatal(err)
				}
				if err := s.Close(t.Context()); err != nil {
					t.Fatal(err)
				}
			}
			tbl, _, kv := readTable(t, pqPath)
			if !sameFields(tbl.Schema(), a.Schema()) {
				t.Errorf("Parquet read back as\n%v\nthe Arrow sink writes\n%v", tbl.Schema(), a.Schema())
			}
			if kv["tracecast.schema"] != rt.Schema {
				t.Errorf("metadata %v", kv)
			}
			want := arrowRows(t, filepath.Join(dir, "x.arrow"))
			if got := rows(tbl); fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("rows\n%v\nwant (Arrow)\n%v", got, want)
			}
		})
	}
}

// arrowRows renders an Arrow IPC file's rows like rows does.
func arrowRows(t *testing.T, path string) []string {
	t.Helper()
	tbl := array.NewTableFromRecords(arrowtest.ReadIPC(t, path))
	defer tbl.Release()
	return rows(tbl)
}

func ptr(f float64) *float64 { return &f }

// TestAbort: Abort after some row groups removes PATH.tmp, leaves an older
// PATH as it was and releases every buffer; Close after it does nothing.
func TestAbort(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	sinktest.AbortOver(t, filepath.Join(t.TempDir(), "entities.parquet"), func(path string) (tracecast.Sink, error) {
		return New(Options{Path: path, RowGroupRows: 5, Allocator: mem})
	}, entities(12), true)
}

// TestRootIsNotRepeated: the schema's root is written REQUIRED, as Arrow
// C++ (pyarrow) writes it, not REPEATED, arrow/go's default. The Parquet
// format gives the root no repetition; readers that take a REPEATED root
// at its word see every column as a list and fail on the data pages
// (hyparquet: "Offset is outside the bounds of the DataView"; parquet-go
// panics; Impala, Snowflake and Velox refuse the file).
func TestRootIsNotRepeated(t *testing.T) {
	path := filepath.Join(t.TempDir(), "entities.parquet")
	s, err := New(Options{Path: path, Tables: arrow.RecordTables("ms")})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: entities(5)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	root := r.MetaData().Schema.Root()
	if rep := root.RepetitionType(); rep == pq.Repetitions.Repeated {
		t.Errorf("root %q is %s in the file's footer; want required", root.Name(), rep)
	}
	for i := range r.MetaData().Schema.NumColumns() {
		if c := r.MetaData().Schema.Column(i); c.MaxRepetitionLevel() != 0 {
			t.Errorf("column %s: max repetition level %d, want 0 (a flat table)", c.Name(), c.MaxRepetitionLevel())
		}
	}
}
