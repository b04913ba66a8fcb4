package arrow

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/sinktest"
)

// sampleEntities returns n entities cycling through every nature, one
// time unit apart.
func sampleEntities(n int) []tracecast.Entity {
	return sinktest.Entities(n, func(i int) (float64, float64, string) {
		return float64(i), float64(i) + 0.5, fmt.Sprintf("v%d", i)
	})
}

// readAll reads every record of an IPC file or stream with the Go reader and
// returns them as one row-wise string per row, plus the schema.
func readAll(t *testing.T, path string, format Format) (*arrow.Schema, []string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows []string
	addRows := func(rec arrow.Record) {
		for r := range int(rec.NumRows()) {
			var cells []string
			for c := range int(rec.NumCols()) {
				col := rec.Column(c)
				if col.IsNull(r) {
					cells = append(cells, "null")
				} else {
					cells = append(cells, col.ValueStr(r))
				}
			}
			rows = append(rows, strings.Join(cells, "|"))
		}
	}
	if format == FormatFile {
		fr, err := ipc.NewFileReader(f)
		if err != nil {
			t.Fatalf("open %s: %v", path, err)
		}
		defer fr.Close()
		for i := range fr.NumRecords() {
			rec, err := fr.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			addRows(rec)
		}
		return fr.Schema(), rows
	}
	sr, err := ipc.NewReader(f)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer sr.Release()
	for sr.Next() {
		addRows(sr.Record())
	}
	if err := sr.Err(); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	return sr.Schema(), rows
}

func TestSinkRoundTrip(t *testing.T) {
	for _, format := range []Format{FormatFile, FormatStream} {
		t.Run(string(format), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "out.arrow")
			s, err := New(Options{Path: path, Format: format, Allocator: mem, Tables: []Table{EntityTable("ms")}})
			if err != nil {
				t.Fatal(err)
			}
			ents := sampleEntities(23)
			sinktest.CommitOnClose(t, s, path, format == FormatFile, ents[:10], []tracecast.Entity{}, ents[10:20], ents[20:])
			if s.Rows() != 23 || s.Batches() != 3 {
				t.Errorf("rows %d batches %d, want 23 and 3", s.Rows(), s.Batches())
			}
			schema, rows := readAll(t, path, format)
			if !schema.Equal(EntitySchema("ms")) {
				t.Errorf("schema\n%v\nwant\n%v", schema, EntitySchema("ms"))
			}
			if u, _ := schema.Metadata().GetValue("time_unit"); u != "ms" {
				t.Errorf("time_unit metadata %q", u)
			}
			if len(rows) != len(ents) {
				t.Fatalf("%d rows, want %d", len(rows), len(ents))
			}
			for i, e := range ents {
				if want := sinktest.EntityRow(e); rows[i] != want {
					t.Errorf("row %d\n got %s\nwant %s", i, rows[i], want)
				}
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if format == FormatFile && !bytes.HasSuffix(data, []byte("ARROW1")) {
				t.Error("file format output has no footer magic")
			}
			if format == FormatStream && !bytes.HasSuffix(data, []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}) {
				t.Error("stream output has no end-of-stream marker")
			}
			for _, f := range schema.Fields() {
				if f.Type.ID() == arrow.DICTIONARY {
					t.Errorf("column %s is dictionary-encoded", f.Name)
				}
			}
		})
	}
}

// TestStreamKeepsFlushedBatches reads a stream output written in place (a
// live pipeline's) while the sink is still open, as after a killed run:
// every written batch must be there.
func TestStreamKeepsFlushedBatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.arrows")
	s, err := New(Options{Path: path, Format: FormatStream, InPlace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(t.Context())
	ents := sampleEntities(7)
	for i := range 3 {
		if err := s.Write(t.Context(), tracecast.Batch{Items: ents}); err != nil {
			t.Fatal(err)
		}
		_, rows := readAll(t, path, FormatStream)
		if len(rows) != 7*(i+1) {
			t.Fatalf("after %d batches a reader sees %d rows, want %d", i+1, len(rows), 7*(i+1))
		}
	}
}

func TestEmptyOutputIsValid(t *testing.T) {
	for _, format := range []Format{FormatFile, FormatStream} {
		t.Run(string(format), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "empty")
			s, err := New(Options{Path: path, Format: format, Allocator: mem})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			schema, rows := readAll(t, path, format)
			if len(rows) != 0 || !schema.Equal(EntitySchema("")) {
				t.Errorf("rows %d, schema %v", len(rows), schema)
			}
		})
	}
}

type sample struct {
	Time  float64
	Node  string
	Watts *float64
}

var sampleSchema = arrow.NewSchema([]arrow.Field{
	{Name: "time", Type: arrow.PrimitiveTypes.Float64},
	{Name: "node", Type: arrow.BinaryTypes.String},
	{Name: "watts", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

func sampleTable() Table {
	return NewTable(sampleSchema, func(b *array.RecordBuilder) func(*sample) {
		tm := b.Field(0).(*array.Float64Builder)
		node := b.Field(1).(*array.StringBuilder)
		watts := b.Field(2).(*array.Float64Builder)
		return func(s *sample) {
			tm.Append(s.Time)
			node.Append(s.Node)
			if s.Watts == nil {
				watts.AppendNull()
			} else {
				watts.Append(*s.Watts)
			}
		}
	})
}

func TestCustomTable(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	path := filepath.Join(t.TempDir(), "power.arrow")
	s, err := New(Options{Path: path, Allocator: mem, Tables: []Table{EntityTable(""), sampleTable()}})
	if err != nil {
		t.Fatal(err)
	}
	w := 12.5
	if err := s.Write(t.Context(), tracecast.Batch{Items: []sample{{1, "n0", &w}, {2, "n1", nil}}}); err != nil {
		t.Fatal(err)
	}
	// Once the schema is chosen, another record type is an error.
	err = s.Write(t.Context(), tracecast.Batch{Items: sampleEntities(1)})
	if err == nil || !strings.Contains(err.Error(), "this output's schema takes []arrow.sample") {
		t.Errorf("mixed types: err = %v", err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	schema, rows := readAll(t, path, FormatFile)
	if !schema.Equal(sampleSchema) || fmt.Sprint(rows) != "[1|n0|12.5 2|n1|null]" {
		t.Errorf("schema %v rows %v", schema, rows)
	}
}

func TestSinkErrors(t *testing.T) {
	dir := t.TempDir()
	// A missing directory is created (TestSinkCreatesDir); one under a
	// regular file cannot be.
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no path", Options{}, "path is empty"},
		{"bad format", Options{Path: "x", Format: "parquet"}, `unknown Arrow format "parquet" (known: file, stream)`},
		{"file to stdout", Options{Path: "-"}, "needs a seekable file"},
		{"dir is a file", Options{Path: filepath.Join(blocker, "x")}, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}

	s, err := New(Options{Path: filepath.Join(dir, "x.arrow")})
	if err != nil {
		t.Fatal(err)
	}
	err = s.Write(t.Context(), tracecast.Batch{Items: []string{"a"}})
	if err == nil || !strings.Contains(err.Error(), "no Arrow schema for items of type []string") {
		t.Errorf("unknown type: err = %v", err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: sampleEntities(1)}); err == nil {
		t.Error("Write after Close succeeded")
	}
}

func TestStreamToStdout(t *testing.T) {
	var out bytes.Buffer
	s, err := New(Options{Path: "-", Format: FormatStream, Stdout: &out})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(t.Context(), tracecast.Batch{Items: sampleEntities(4)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	n := 0
	for r.Next() {
		n += int(r.Record().NumRows())
	}
	if n != 4 {
		t.Errorf("%d rows on stdout, want 4", n)
	}
}

func BenchmarkWriteEntities(b *testing.B) {
	s, err := New(Options{Path: filepath.Join(b.TempDir(), "bench.arrows"), Format: FormatStream})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	batch := tracecast.Batch{Items: sampleEntities(1024)}
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Write(context.Background(), batch); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1024), "ns/entity")
}

func TestSinkCreatesDir(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out", "run", "x.arrow")
	s, err := New(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}

// TestTimeUnitMetadata: an entity output records the unit its records come
// with (a paje parser's Batch.Meta), unless the sink's options fix one.
func TestTimeUnitMetadata(t *testing.T) {
	for _, tc := range []struct {
		name     string
		table    string // the sink's time_unit option
		meta     map[string]string
		want     string
		fixedOpt bool
	}{
		{name: "nothing said", want: "trace"},
		{name: "the parser's unit", meta: map[string]string{"time_unit": "ms"}, want: "ms"},
		{name: "the option without a parser's unit", table: "us", want: "us", fixedOpt: true},
		{name: "the option over the parser's unit", table: "s", meta: map[string]string{"time_unit": "ms"}, want: "s", fixedOpt: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "x.arrow")
			s, err := New(Options{Path: path, Tables: RecordTables(tc.table), FixedTimeUnit: tc.fixedOpt})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Write(t.Context(), tracecast.Batch{Items: sampleEntities(3), Meta: tc.meta}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(t.Context()); err != nil {
				t.Fatal(err)
			}
			schema, _ := readAll(t, path, FormatFile)
			if u, _ := schema.Metadata().GetValue("time_unit"); u != tc.want {
				t.Errorf("time_unit %q, want %q", u, tc.want)
			}
			if !schema.Equal(EntitySchema(tc.want)) {
				t.Errorf("schema\n%v\nwant\n%v", schema, EntitySchema(tc.want))
			}
		})
	}
}

// TestMetadataBytesAreStable: a batch's Meta (a map) reaches the schema in
// key order, so the same records give the same bytes run after run.
func TestMetadataBytesAreStable(t *testing.T) {
	meta := map[string]string{"class": "idle", "period": "0.0005", "r": "4", "rules": "smpi", "t0": "0", "time_unit": "s"}
	var first []byte
	for i := range 20 {
		var out bytes.Buffer
		s, err := New(Options{Path: "-", Format: FormatStream, Stdout: &out, Tables: RecordTables("")})
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Write(t.Context(), tracecast.Batch{Items: []tracecast.Sample{{K: 1, T: 0.5, X: 2}}, Meta: meta}); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = out.Bytes()
		} else if !bytes.Equal(out.Bytes(), first) {
			t.Fatalf("run %d wrote other bytes than the first", i)
		}
	}
}

// A stale PATH.tmp (a killed run's) is removed at the start, not written
// through: a symbolic link there left the file it named truncated and
// overwritten with Arrow data.
func TestStaleTempRemovedNotFollowed(t *testing.T) {
	dir := t.TempDir()
	victim := filepath.Join(dir, "input.trace")
	if err := os.WriteFile(victim, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "k.arrow")
	if err := os.Symlink(victim, path+".tmp"); err != nil {
		t.Fatal(err)
	}
	s, err := New(Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(context.Background(), tracecast.Batch{Items: sampleEntities(10)}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep me" {
		t.Errorf("the stale link's target was overwritten (%d bytes)", len(b))
	}
	if fi, err := os.Lstat(path); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("k.arrow is not a regular file: %v, %v", fi, err)
	}
	if _, err := os.Lstat(path + ".tmp"); err == nil {
		t.Error("k.arrow.tmp left")
	}
}

// TestAbort: Abort removes PATH.tmp and leaves an older PATH as it was; a
// stream written in place (a live pipeline's) keeps what it wrote, closed.
// Each releases every buffer, and Close after Abort does nothing.
func TestAbort(t *testing.T) {
	for _, tc := range []struct {
		format  Format
		inPlace bool
	}{{FormatFile, false}, {FormatStream, false}, {FormatStream, true}} {
		format := tc.format
		t.Run(fmt.Sprintf("%s in place %v", format, tc.inPlace), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			path := filepath.Join(t.TempDir(), "out")
			sinktest.AbortOver(t, path, func(path string) (tracecast.Sink, error) {
				return New(Options{Path: path, Format: format, Allocator: mem, InPlace: tc.inPlace})
			}, sampleEntities(7), !tc.inPlace)
			if !tc.inPlace {
				return
			}
			if _, rows := readAll(t, path, format); len(rows) != 7 {
				t.Errorf("the aborted stream holds %d rows, want the 7 written", len(rows))
			}
		})
	}
}
