// Package parquet writes batches as Apache Parquet files, the columnar
// format that DuckDB, pandas/pyarrow, polars, Spark and R's arrow read
// natively (DuckDB reads Arrow IPC only through an extension).
//
// The schemas are the Arrow outputs' (package sinks/arrow: the entity
// schema, the signal schema, one per result record type), converted as
// arrow/go's pqarrow converts them: utf8 columns become Parquet strings,
// float64 doubles, int32/int64 integers, timestamp[us, UTC] a UTC-adjusted
// TIMESTAMP(MICROS); nullable columns are OPTIONAL, the others REQUIRED.
// The Arrow schema metadata ("tracecast.schema", "time_unit", a signal's
// class, period, R, t0) is the file's key-value metadata, next to the
// serialized Arrow schema ("ARROW:schema") that Arrow readers use to get
// the exact types back.
//
// The sink has its own writer of flat tables (writer.go, thrift.go,
// encode.go): entities go straight from the batches to the columns
// (entity.go), other records through the Arrow records sinks/arrow builds.
// Pages are version 2 data pages of at most 128 KiB, compressed with
// snappy (the default, as DuckDB's and pyarrow's writers) or zstd
// (Options.Compression: smaller files, more CPU time), with chunk
// statistics; string columns are dictionary-encoded while their
// dictionary stays under 1 MiB, plain after. On the 41 MB StarPU trace
// (957 k entities) `states --format parquet` takes about the time of
// `--format pjdump`'s text (docs/performance.md) and writes 20.3 MB
// (16.4 MB with zstd).
//
// # Bounded memory
//
// Parquet writes a row group column by column, so a row group is held in
// memory (encoded and compressed) until it is complete. A row group ends
// when it holds RowGroupRows rows or RowGroupBytes bytes (its compressed
// pages, the pages being filled and its dictionaries), whichever comes
// first. Memory is bounded by these, whatever the length of the run: the
// row group, plus per column the page being filled (at most
// RowGroupBytes/16 and 128 KiB, and one batch). On the 41 MB StarPU trace
// the defaults make 8 row groups.
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

	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/sinks/arrow"
)

// Defaults of Options.
const (
	// DefaultRowGroupRows is 128 Ki rows: the 41 MB StarPU trace's 957 k
	// entities make 8 row groups, which DuckDB reads in parallel.
	DefaultRowGroupRows = 128 << 10
	// DefaultRowGroupBytes bounds the bytes of a row group held in
	// memory.
	DefaultRowGroupBytes = 64 << 20
)

// Compression is the codec of a Parquet file's pages.
type Compression string

// The codecs.
const (
	// Snappy is the default, as in DuckDB's, pyarrow's and Spark's
	// writers: cheap enough to write Parquet at the reader's speed.
	Snappy Compression = "snappy"
	// Zstd makes smaller files (16.4 against 20.3 MB on the 41 MB StarPU
	// trace) for 0.3 s more CPU time on that trace (about twice the time).
	Zstd Compression = "zstd"
	// Uncompressed stores the pages as they are.
	Uncompressed Compression = "none"
)

// ParseCompression accepts "snappy", "zstd", "none" and "" (Snappy).
func ParseCompression(s string) (Compression, error) {
	switch c := Compression(s); c {
	case "":
		return Snappy, nil
	case Snappy, Zstd, Uncompressed:
		return c, nil
	}
	return "", fmt.Errorf("unknown compression %q (snappy, zstd or none)", s)
}

// Options configure a Sink.
type Options struct {
	// Path is the output file (PATH.tmp until Close).
	Path string
	// Tables lists the record types the sink can write; the first
	// non-empty batch selects one, and the first table is the schema of an
	// output that received no record. Default: arrow.RecordTables("").
	Tables []arrow.Table
	// Compression is the pages' codec (default Snappy).
	Compression Compression
	// RowGroupRows and RowGroupBytes end a row group (see the package
	// documentation); 0 means the default.
	RowGroupRows  int64
	RowGroupBytes int64
	// Allocator allocates the Arrow records' buffers (default
	// memory.NewGoAllocator()); tests pass a checked allocator. The Parquet
	// writer's own buffers come from Go's allocator.
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

	b *arrow.Builder
	w *writer
	// entities: the table is the entity table, whose batches are written
	// straight to the columns (appendEntities), not through Arrow records.
	entities bool
	scratch  []byte
	// meta is the first batches' Batch.Meta, added to the schema.
	meta map[string]string

	rows   int64
	closed bool
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
	codec, err := ParseCompression(string(opts.Compression))
	if err != nil {
		return nil, fmt.Errorf("parquet sink: %w", err)
	}
	opts.Compression = codec
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
func (s *Sink) RowGroups() int {
	if s.w == nil {
		return 0
	}
	n := len(s.w.groups)
	if s.w.groupRows > 0 {
		n++
	}
	return n
}

// DurableOnClose is true: without its footer the file is not readable.
func (s *Sink) DurableOnClose() bool { return true }

// ForgetsItems: Write encodes the records before it returns, so that
// their batch may be reused (tracecast.ItemsForgetter).
func (s *Sink) ForgetsItems() bool { return true }

// Write appends the records of b to the current row group, and writes the
// row group out when it reached its size.
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
	if es, ok := b.Items.([]tracecast.Entity); ok && s.entities {
		for off := 0; off < len(es); {
			n := int(min(int64(len(es)-off), s.opts.RowGroupRows-s.w.groupRows))
			s.scratch = appendEntities(s.w.cols, es[off:off+n], s.scratch)
			if err := s.advance(n); err != nil {
				return err
			}
			off += n
		}
		return nil
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
		n := min(rec.NumRows()-off, s.opts.RowGroupRows-s.w.groupRows)
		for i, col := range rec.Columns() {
			if err := s.w.cols[i].appendArray(col, int(off), int(off+n)); err != nil {
				return output.Annotate("parquet sink", s.opts.Path, err)
			}
		}
		if err := s.advance(int(n)); err != nil {
			return err
		}
		off += n
	}
	return nil
}

// advance counts n rows appended to the columns: the pages that reached
// their size are encoded, and the row group is written out once it holds
// RowGroupRows rows or RowGroupBytes bytes.
func (s *Sink) advance(n int) error {
	s.rows += int64(n)
	s.w.groupRows += int64(n)
	s.w.endPages(false)
	if s.w.groupRows >= s.opts.RowGroupRows || s.w.heldBytes() >= s.opts.RowGroupBytes {
		if err := s.w.endRowGroup(); err != nil {
			return output.Annotate("parquet sink", s.opts.Path, err)
		}
	}
	return nil
}

// start selects the table for items (on the first batch; nil selects the
// first table) and starts the Parquet writer with its schema and the
// first batches' metadata.
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
	cols, err := columnsOf(b.Schema())
	if err != nil {
		b.Release()
		return output.Annotate("parquet sink", s.opts.Path, err)
	}
	kv, err := keyValueMetadata(b.Schema(), s.opts.Allocator)
	if err != nil {
		b.Release()
		return output.Annotate("parquet sink", s.opts.Path, err)
	}
	// Pages and dictionaries of at most a sixteenth of the row group
	// bound (the pages being filled are held on top of the row group),
	// pages of 128 KiB and dictionaries of 1 MiB at most.
	page := int(min(128<<10, max(4<<10, s.opts.RowGroupBytes/16)))
	dict := int(min(1<<20, max(4<<10, s.opts.RowGroupBytes/16)))
	w, err := newWriter(s.buf, cols, kv, page, dict, s.opts.Compression)
	if err != nil {
		b.Release()
		return output.Annotate("parquet sink", s.opts.Path, err)
	}
	s.b, s.w = b, w
	s.entities = t.ItemsType() == reflect.TypeFor[[]tracecast.Entity]() && isEntitySchema(cols)
	return nil
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
	if s.w != nil && keep {
		errs = append(errs, s.w.close())
	}
	if s.w != nil {
		s.w.release()
	}
	if s.b != nil {
		s.b.Release()
	}
	errs = append(errs, s.buf.Flush())
	return output.Finish(s.out, keep, "parquet sink", s.opts.Path, errs...)
}
