// Package parquet writes batches as Apache Parquet files, the columnar
// format that DuckDB, pandas/pyarrow, polars, Spark and R's arrow read
// natively (DuckDB reads Arrow IPC only through an extension).
//
// The schemas are the Arrow outputs' (package sinks/arrow: the entity
// schema, the signal schema, one per result record type), converted as
// arrow/go's pqarrow converts them: utf8 columns become Parquet strings,
// float64 doubles, int32/int64 integers, timestamp[us, UTC] a UTC-adjusted
// TIMESTAMP(MICROS); nullable columns are OPTIONAL, the others REQUIRED.
// The sink writes the Arrow records it builds with sinks/arrow through
// arrow/go's Parquet file writer (columns.go says why not through pqarrow).
// The Arrow schema metadata ("tracecast.schema", "time_unit", a signal's
// class, period, R, t0) is the file's key-value metadata, next to the
// serialized Arrow schema ("ARROW:schema") that Arrow readers use to get
// the exact types back. Columns are zstd-compressed, with statistics, in
// version 2 data pages; string columns are dictionary-encoded while their
// dictionary stays under 1 MiB.
//
// # Bounded memory
//
// Parquet writes a row group column by column, so a row group is held in
// memory (encoded and compressed) until it is complete. A row group ends
// when it holds RowGroupRows rows or RowGroupBytes compressed bytes,
// whichever comes first. Memory is bounded by these, whatever the length
// of the run: the row group's compressed pages, plus per column the page
// being filled and the dictionary (each at most RowGroupBytes/16 and 1
// MiB), plus the dictionary indices of the row group (4 bytes per row and
// string column). On the 41 MB StarPU trace (1.3 M entities) the defaults
// make 11 row groups and a 16 MB file.
//
// # Atomicity
//
// The footer, without which a Parquet file cannot be read, is written by
// Close. The sink writes PATH.tmp and renames it to PATH after the footer
// is written and synced: PATH is complete or absent. What the sink received
// is durable only on Close (DurableOnClose), so do not put one in a
// long-running live pipeline.
package parquet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"

	"github.com/rs/zerolog"

	arrowlib "github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/memory"
	pq "github.com/apache/arrow/go/v15/parquet"
	"github.com/apache/arrow/go/v15/parquet/compress"
	"github.com/apache/arrow/go/v15/parquet/file"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/sinks/arrow"
)

// Defaults of Options.
const (
	// DefaultRowGroupRows is 128 Ki rows: the 41 MB StarPU trace's 1.3 M
	// entities make 11 row groups, which DuckDB reads in parallel.
	DefaultRowGroupRows = 128 << 10
	// DefaultRowGroupBytes bounds the compressed bytes of a row group
	// held in memory.
	DefaultRowGroupBytes = 64 << 20
)

// Options configure a Sink.
type Options struct {
	// Path is the output file (PATH.tmp until Close).
	Path string
	// Tables lists the record types the sink can write; the first
	// non-empty batch selects one, and the first table is the schema of an
	// output that received no record. Default: arrow.RecordTables("").
	Tables []arrow.Table
	// RowGroupRows and RowGroupBytes end a row group (see the package
	// documentation); 0 means the default.
	RowGroupRows  int64
	RowGroupBytes int64
	// Allocator allocates the Arrow records' buffers (default
	// memory.NewGoAllocator()); tests pass a checked allocator. The Parquet
	// writer's own buffers come from Go's allocator: arrow/go v15's
	// buffered page writer leaves one buffer per column and row group to
	// the garbage collector, which a checked allocator reports as a leak.
	Allocator memory.Allocator
	// Logger receives the warning about a stale PATH.tmp removed at the
	// start; the zero value logs nothing.
	Logger zerolog.Logger
}

// Sink writes batches to a Parquet file. It implements tracecast.Sink and
// is driven by a single goroutine.
type Sink struct {
	opts Options
	// out is PATH.tmp until Close renames it, or PATH itself for a device
	// or a named pipe (internal/output).
	out *output.File
	buf *bufio.Writer

	b   *arrow.Builder
	w   *file.Writer
	rgw file.BufferedRowGroupWriter // the row group being filled
	cw  columnWriter
	// meta is the first batches' Batch.Meta, added to the schema.
	meta map[string]string

	rows      int64
	rowGroups int
	// groupRows is the number of rows in the current row group; full says
	// it reached its size: the next record starts another.
	groupRows int64
	full      bool
	closed    bool
}

// New creates PATH.tmp (and PATH's directory; a stale PATH.tmp left by a
// killed run is removed first, logged), or opens PATH itself when it is a
// device or a named pipe (/dev/null, a FIFO: a rename would replace it
// with a regular file), and returns a Sink. The
// Parquet writer starts with the first batch, once its record type has
// selected the schema.
func New(opts Options) (*Sink, error) {
	if opts.Path == "" {
		return nil, errors.New("parquet sink: path is empty")
	}
	if opts.Path == "-" {
		return nil, errors.New("parquet sink: standard output is not supported (a Parquet file is read from its footer): give a file")
	}
	if opts.RowGroupRows < 0 || opts.RowGroupBytes < 0 {
		return nil, fmt.Errorf("parquet sink: negative row group size (%d rows, %d bytes)", opts.RowGroupRows, opts.RowGroupBytes)
	}
	if opts.RowGroupRows == 0 {
		opts.RowGroupRows = DefaultRowGroupRows
	}
	if opts.RowGroupBytes == 0 {
		opts.RowGroupBytes = DefaultRowGroupBytes
	}
	if len(opts.Tables) == 0 {
		opts.Tables = arrow.RecordTables("")
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.NewGoAllocator()
	}
	// A PATH.tmp left by a killed run is removed first (logged); a device
	// or a pipe (-o /dev/null) is written in place: renaming PATH.tmp over
	// it would replace it with a regular file.
	f, err := output.Open(opts.Path, output.Options{Logger: opts.Logger})
	if err != nil {
		return nil, fmt.Errorf("parquet sink: %w", err)
	}
	return &Sink{opts: opts, out: f, buf: bufio.NewWriterSize(f, 1<<20)}, nil
}

// Rows is the number of rows written so far.
func (s *Sink) Rows() int64 { return s.rows }

// RowGroups is the number of row groups: those written out, plus the one
// being filled.
func (s *Sink) RowGroups() int { return s.rowGroups }

// DurableOnClose is true: without its footer the file is not readable.
func (s *Sink) DurableOnClose() bool { return true }

// Write appends the records of b to the current row group, and ends the
// row group when it reached its size.
func (s *Sink) Write(ctx context.Context, b tracecast.Batch) error {
	if s.closed {
		return fmt.Errorf("parquet sink %s: write after close", s.opts.Path)
	}
	if s.b == nil && len(b.Meta) > 0 {
		s.meta = b.Meta // for the schema, even if every batch is empty
	}
	if b.Items == nil {
		return nil
	}
	if v := reflect.ValueOf(b.Items); v.Kind() == reflect.Slice && v.Len() == 0 {
		return nil
	}
	if err := s.start(b.Items); err != nil {
		return err
	}
	rec, err := s.b.Record(b.Items)
	if err != nil {
		return output.Annotate("parquet sink", s.opts.Path, err)
	}
	if rec == nil {
		return nil
	}
	defer rec.Release()
	for off := int64(0); off < rec.NumRows(); {
		if s.rgw == nil || s.full {
			// Writes out the current row group, if any.
			s.rgw = s.w.AppendBufferedRowGroup()
			s.rowGroups++
			s.groupRows, s.full = 0, false
		}
		end := min(rec.NumRows(), off+s.opts.RowGroupRows-s.groupRows)
		part := rec.NewSlice(off, end)
		err := s.writeRecord(part)
		part.Release()
		if err != nil {
			return output.Annotate("parquet sink", s.opts.Path, err)
		}
		s.rows += end - off
		s.groupRows += end - off
		off = end
		s.full = s.groupRows >= s.opts.RowGroupRows || s.rgw.TotalCompressedBytes() >= s.opts.RowGroupBytes
	}
	return nil
}

// writeRecord appends every column of rec to the row group's.
func (s *Sink) writeRecord(rec arrowlib.Record) error {
	for i, col := range rec.Columns() {
		w, err := s.rgw.Column(i)
		if err != nil {
			return err
		}
		if err := s.cw.write(w, col); err != nil {
			return err
		}
	}
	return nil
}

// start selects the table for items (on the first batch; nil selects the
// first table) and opens the Parquet writer with its schema and the first
// batches' metadata.
func (s *Sink) start(items any) error {
	if s.b != nil {
		return nil
	}
	t := s.opts.Tables[0]
	if items != nil {
		var err error
		if t, err = arrow.TableFor(s.opts.Tables, items); err != nil {
			return output.Annotate("parquet sink", s.opts.Path, err)
		}
	}
	b := arrow.NewBuilder(s.opts.Allocator, t, s.meta)
	root, err := parquetSchema(b.Schema())
	if err != nil {
		b.Release()
		return output.Annotate("parquet sink", s.opts.Path, err)
	}
	kv, err := keyValueMetadata(b.Schema(), s.opts.Allocator)
	if err != nil {
		b.Release()
		return output.Annotate("parquet sink", s.opts.Path, err)
	}
	s.b = b
	s.w = file.NewParquetWriter(s.buf, root, file.WithWriterProps(s.writerProperties(b.Schema())), file.WithWriteMetadata(kv))
	return nil
}

// writerProperties are the Parquet settings for schema: zstd; data pages
// version 2 (for version 1 pages, arrow/go v15 grows the buffer of a
// nullable column's definition levels 4 bytes at a time, copying it each
// time: a third more CPU time on the 41 MB StarPU trace); dictionary
// encoding for the string columns only (names, states: few distinct values;
// times and values are mostly distinct, and a dictionary that overflows
// only costs time); pages and dictionaries of at most a sixteenth of the
// row group bound, 1 MiB at most, since the bytes not yet in a page are
// not counted in the row group's size.
func (s *Sink) writerProperties(schema *arrowlib.Schema) *pq.WriterProperties {
	page := min(1<<20, max(4<<10, s.opts.RowGroupBytes/16))
	opts := []pq.WriterProperty{
		pq.WithCompression(compress.Codecs.Zstd),
		pq.WithDataPageVersion(pq.DataPageV2),
		pq.WithMaxRowGroupLength(s.opts.RowGroupRows),
		pq.WithDataPageSize(page),
		pq.WithDictionaryPageSizeLimit(page),
		pq.WithDictionaryDefault(false),
		pq.WithCreatedBy("tracecast"),
	}
	for _, f := range schema.Fields() {
		if f.Type.ID() == arrowlib.STRING {
			opts = append(opts, pq.WithDictionaryFor(f.Name, true))
		}
	}
	return pq.NewWriterProperties(opts...)
}

// Close writes the last row group and the footer, syncs, and renames
// PATH.tmp to PATH. An output that received no record is a valid Parquet
// file with no row, with the first table's schema. Calling Close again is
// a no-op.
func (s *Sink) Close(ctx context.Context) error { return s.end(true) }

// Abort discards the output (tracecast.Aborter): PATH.tmp is removed and
// PATH is left as it was. After Close, or again, it is a no-op.
func (s *Sink) Abort() error { return s.end(false) }

// end closes the writer, which releases its buffers, then renames PATH.tmp
// to PATH (keep) or removes it (internal/output's Commit and Abort). An
// error at any step removes PATH.tmp too: PATH is left as it was.
func (s *Sink) end(keep bool) error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if keep {
		if err := s.start(nil); err != nil {
			errs = append(errs, err)
		}
	} else {
		s.buf.Reset(io.Discard) // nothing more reaches the output: no footer
	}
	if s.w != nil {
		errs = append(errs, s.w.Close())
	}
	if s.b != nil {
		s.b.Release()
	}
	errs = append(errs, s.buf.Flush())
	err := errors.Join(errs...)
	switch {
	case !keep:
		err = s.out.Abort() // what it wrote is discarded, errors too
	case err != nil:
		s.out.Abort()
	default:
		err = s.out.Commit()
	}
	if err != nil {
		return output.Annotate("parquet sink", s.opts.Path, err)
	}
	return nil
}
