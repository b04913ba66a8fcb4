// Package arrowtest reads the Arrow IPC and Parquet files tracecast writes
// back in tests, with arrow/go's readers: their schema, records or table,
// row groups and key-value metadata, released when the test ends.
package arrowtest

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"
	"github.com/apache/arrow/go/v15/parquet/file"
	"github.com/apache/arrow/go/v15/parquet/pqarrow"
)

// ReadIPC reads the Arrow IPC file at path: its schema and its records.
func ReadIPC(t testing.TB, path string) (*arrow.Schema, []arrow.Record) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := ipc.NewFileReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer r.Close()
	recs := make([]arrow.Record, r.NumRecords())
	for i := range recs {
		if recs[i], err = r.RecordAt(i); err != nil {
			t.Fatalf("%s: record %d: %v", path, i, err)
		}
		t.Cleanup(recs[i].Release)
	}
	return r.Schema(), recs
}

// NumRows is the number of rows of recs.
func NumRows(recs []arrow.Record) int64 {
	var n int64
	for _, rec := range recs {
		n += rec.NumRows()
	}
	return n
}

// Parquet is a Parquet file read back whole.
type Parquet struct {
	Table  arrow.Table    // its rows, as arrow/go's pqarrow reads them
	Groups []int64        // its row groups' lengths
	Meta   arrow.Metadata // its key-value metadata, without ARROW:schema
}

// ReadParquet reads the Parquet file at path.
func ReadParquet(t testing.TB, path string) Parquet {
	t.Helper()
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer r.Close()
	var p Parquet
	var keys, values []string
	kv := r.MetaData().KeyValueMetadata()
	for i, k := range kv.Keys() {
		if k != "ARROW:schema" {
			keys, values = append(keys, k), append(values, kv.Values()[i])
		}
	}
	p.Meta = arrow.NewMetadata(keys, values)
	for i := range r.NumRowGroups() {
		p.Groups = append(p.Groups, r.RowGroup(i).NumRows())
	}
	fr, err := pqarrow.NewFileReader(r, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	if p.Table, err = fr.ReadTable(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Table.Release)
	return p
}
