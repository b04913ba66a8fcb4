package arrow

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/array"
	"github.com/apache/arrow/go/v15/arrow/ipc"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/sinktest"
)

// mixedEntities returns n entities whose natures, links, extra fields and
// numbers vary with seed, so that batches have no null, some nulls or
// only nulls in the optional columns.
func mixedEntities(n, seed int) []tracecast.Entity {
	out := make([]tracecast.Entity, n)
	for i := range out {
		k := (i*7 + seed) % 23
		e := tracecast.Entity{
			Nature:    tracecast.Nature(k%5 + 1),
			Container: fmt.Sprintf("C%d", k%4),
			Type:      []string{"T", "", "Worker State", "é"}[k%4],
			Start:     float64(i) * 0.1,
			End:       float64(i)*0.1 + float64(k)/3,
			Value:     fmt.Sprintf("v%d", i*seed%17),
		}
		switch {
		case seed%3 == 1:
			e.Nature = tracecast.NatureState // no variable, link or extra
		case seed%3 == 2 && e.Nature == tracecast.NatureLink:
			e.Nature = tracecast.NatureEvent // no link
		}
		switch e.Nature {
		case tracecast.NatureVariable:
			e.Number = float64(k) - 11.5
			if k == 3 {
				e.Number = math.NaN()
			}
		case tracecast.NatureLink:
			e.Ext = &tracecast.EntityExt{StartContainer: "a", EndContainer: fmt.Sprint("b", k), Key: fmt.Sprint("k", i)}
			if k == 4 {
				e.Ext = nil // a link without its ends: empty strings
			}
		case tracecast.NatureState:
			e.Imbrication = k % 3
			if k%2 == 0 && seed%3 == 0 {
				e.Ext = &tracecast.EntityExt{Extra: []tracecast.Field{{Name: "Size", Value: fmt.Sprint(k)}, {Name: "Tag", Value: `a"b` + "\n"}}}
			}
		}
		out[i] = e
	}
	return out
}

// TestEntityRecorderMatchesBuilder: entity records built by the entity
// table's recorder are those of arrow/go's RecordBuilder through
// bindEntity — the same schema, record batches, values and nulls, read
// back from both outputs, stream and file — on batches of every size
// around the validity bitmaps' bytes and with no, some or only nulls. (The
// bytes differ only in the declared lengths of the buffers, which the
// builder allocates 32 rows at least.)
func TestEntityRecorderMatchesBuilder(t *testing.T) {
	var batches [][]tracecast.Entity
	for seed, n := range []int{1, 7, 8, 9, 16, 17, 300, 2048, 5, 64, 1000, 3} {
		batches = append(batches, mixedEntities(n, seed))
	}
	for _, format := range []Format{FormatStream, FormatFile} {
		t.Run(string(format), func(t *testing.T) {
			var recs [2][]arrow.Record
			var schemas [2]*arrow.Schema
			for i, table := range []Table{EntityTable("ms"), NewTable(EntitySchema("ms"), bindEntity)} {
				path := filepath.Join(t.TempDir(), "x.arrow")
				s, err := New(Options{Path: path, Format: format, Tables: []Table{table}})
				if err != nil {
					t.Fatal(err)
				}
				sinktest.WriteAll(t, s, batches...)
				schemas[i], recs[i] = readRecords(t, path, format)
			}
			if !schemas[0].Equal(schemas[1]) || fmt.Sprint(schemas[0].Metadata()) != fmt.Sprint(schemas[1].Metadata()) {
				t.Errorf("schema\n%v\nwant\n%v", schemas[0], schemas[1])
			}
			if len(recs[0]) != len(batches) || len(recs[1]) != len(batches) {
				t.Fatalf("%d and %d record batches, want %d", len(recs[0]), len(recs[1]), len(batches))
			}
			for i := range batches {
				if !array.RecordApproxEqual(recs[0][i], recs[1][i], array.WithNaNsEqual(true)) {
					t.Errorf("batch %d (%d rows) differs:\n%v\nwant\n%v", i, len(batches[i]), recs[0][i], recs[1][i])
				}
			}
		})
	}
}

// readRecords reads every record batch of an IPC file or stream.
func readRecords(t *testing.T, path string, format Format) (*arrow.Schema, []arrow.Record) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	var recs []arrow.Record
	if format == FormatFile {
		r, err := ipc.NewFileReader(f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range r.NumRecords() {
			rec, err := r.Record(i)
			if err != nil {
				t.Fatal(err)
			}
			rec.Retain()
			recs = append(recs, rec)
		}
		return r.Schema(), recs
	}
	r, err := ipc.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	for r.Next() {
		r.Record().Retain()
		recs = append(recs, r.Record())
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	return r.Schema(), recs
}
