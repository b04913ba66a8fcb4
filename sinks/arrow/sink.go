package arrow

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"

	"github.com/rs/zerolog"

	"github.com/apache/arrow/go/v15/arrow"
	"github.com/apache/arrow/go/v15/arrow/ipc"
	"github.com/apache/arrow/go/v15/arrow/memory"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
)

// Format selects the Arrow IPC format of a Sink.
type Format string

// The two IPC formats; see the package documentation.
const (
	FormatStream Format = "stream"
	FormatFile   Format = "file"
)

// ParseFormat accepts "stream", "file" or "" (FormatFile).
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case "", FormatFile:
		return FormatFile, nil
	case FormatStream:
		return FormatStream, nil
	}
	return "", fmt.Errorf("unknown Arrow format %q (known: file, stream)", s)
}

// Options configure a Sink.
type Options struct {
	// Path is the output file; "-" (standard output) is accepted for
	// FormatStream only.
	Path string
	// Format is FormatFile (default) or FormatStream.
	Format Format
	// Tables lists the record types the sink can write; the first non-empty
	// batch selects one. The first table also gives the schema of an output
	// that received no records. Default: EntityTable("").
	Tables []Table
	// Allocator allocates the Arrow buffers (default memory.NewGoAllocator()).
	// Tests pass a memory.CheckedAllocator to prove nothing leaks.
	Allocator memory.Allocator
	// Stdout replaces os.Stdout for Path "-" (for tests and embedding).
	Stdout io.Writer
	// FixedTimeUnit keeps the tables' own time_unit metadata even when the
	// batches' Meta says another (a unit set in the sink's options wins
	// over the one a parser detected).
	FixedTimeUnit bool
	// Logger receives the warning about a stale PATH.tmp removed at the
	// start; the zero value logs nothing.
	Logger zerolog.Logger
	// InPlace writes a FormatStream file at PATH itself, flushed batch by
	// batch and readable while written (a live pipeline's), rather than
	// as PATH.tmp renamed by Close. The file format is always renamed.
	InPlace bool
}

// Sink writes batches as Arrow IPC record batches, one record batch per
// tracecast batch. It implements tracecast.Sink and is driven by a single
// goroutine.
type Sink struct {
	opts Options
	name string

	// out is the output (internal/output): PATH.tmp until Close renames
	// it, or PATH itself (a device, a pipe, a live stream), or stdout.
	out *output.File
	buf *bufio.Writer
	pos *posWriter // FormatFile: buf with the Seek ipc.FileWriter needs

	b       *builder
	stream  *ipc.Writer
	fwriter *ipc.FileWriter

	rows, batches int64
	closed        bool
	// meta is the first batches' Batch.Meta, added to the schema.
	meta map[string]string
}

// New opens the output and returns a Sink. The Arrow writer itself starts
// with the first batch, once its record type has selected the schema.
func New(opts Options) (*Sink, error) {
	f, err := ParseFormat(string(opts.Format))
	if err != nil {
		return nil, fmt.Errorf("arrow sink: %w", err)
	}
	opts.Format = f
	if opts.Path == "" {
		return nil, errors.New("arrow sink: path is empty")
	}
	if len(opts.Tables) == 0 {
		opts.Tables = []Table{EntityTable("")}
	}
	if opts.Allocator == nil {
		opts.Allocator = memory.NewGoAllocator()
	}
	if opts.Path == "-" && opts.Format == FormatFile {
		return nil, errors.New("arrow sink: the file format needs a seekable file; use format stream for standard output")
	}
	// PATH.tmp until Close renames it (one left by a killed run is removed
	// first, logged), with PATH's directory; a device or a pipe (-o
	// /dev/null) is written in place: renaming PATH.tmp over it would
	// replace it with a regular file.
	out, err := output.Open(opts.Path, output.Options{Stdout: opts.Stdout, Logger: opts.Logger,
		InPlace: opts.InPlace && opts.Format == FormatStream})
	if err != nil {
		return nil, fmt.Errorf("arrow sink: %w", err)
	}
	s := &Sink{opts: opts, name: out.Name(), out: out}
	s.buf = bufio.NewWriterSize(out, 1<<20)
	if opts.Format == FormatFile {
		s.pos = &posWriter{w: s.buf}
	}
	return s, nil
}

// Rows is the number of rows written so far.
func (s *Sink) Rows() int64 { return s.rows }

// Batches is the number of record batches written so far.
func (s *Sink) Batches() int64 { return s.batches }

// Schema is the schema of the output: that of the table selected by the
// first batch, or of the first table before that.
func (s *Sink) Schema() *arrow.Schema {
	if s.b != nil {
		return s.b.rb.Schema()
	}
	return s.opts.Tables[0].Schema()
}

// Write appends b as one record batch. In stream format the bytes are
// flushed to the OS before Write returns.
func (s *Sink) Write(ctx context.Context, b tracecast.Batch) error {
	if s.closed {
		return fmt.Errorf("arrow sink %s: write after close", s.name)
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
	rec, err := s.b.record(b.Items)
	if err != nil {
		return fmt.Errorf("arrow sink %s: %w", s.name, err)
	}
	if rec == nil {
		return nil
	}
	defer rec.Release()
	if s.stream != nil {
		err = s.stream.Write(rec)
		if err == nil {
			err = s.buf.Flush()
		}
	} else {
		err = s.fwriter.Write(rec)
	}
	if err != nil {
		return output.Annotate("arrow sink", s.name, err)
	}
	s.rows += rec.NumRows()
	s.batches++
	return nil
}

// ForgetsItems: Write copies the records into Arrow buffers before it
// returns, so that their batch may be reused (tracecast.ItemsForgetter).
func (s *Sink) ForgetsItems() bool { return true }

// DurableOnClose is true for an output written as PATH.tmp (the file
// format, always: without its footer the file is not readable): what it
// holds is durable only once Close renamed it. (Each batch of a stream
// written in place is flushed to the OS by Write.)
func (s *Sink) DurableOnClose() bool { return s.out.Temp() }

// start selects the table for items (on the first batch) and opens the IPC
// writer. items == nil selects the first table. The first batches'
// Batch.Meta is added to the schema's metadata.
func (s *Sink) start(items any) error {
	if s.b != nil {
		return nil
	}
	t := s.opts.Tables[0]
	if items != nil {
		typ := reflect.TypeOf(items)
		found := false
		for _, c := range s.opts.Tables {
			if c.ItemsType() == typ {
				t, found = c, true
				break
			}
		}
		if !found {
			known := make([]string, len(s.opts.Tables))
			for i, c := range s.opts.Tables {
				known[i] = c.ItemsType().String()
			}
			return fmt.Errorf("arrow sink %s: no Arrow schema for items of type %T (known: %v)", s.name, items, known)
		}
	}
	meta := s.meta
	if _, ok := meta["time_unit"]; ok && s.opts.FixedTimeUnit {
		meta = maps.Clone(meta)
		delete(meta, "time_unit")
	}
	schema := withMetadata(t.Schema(), meta)
	s.b = newBuilder(s.opts.Allocator, t, schema)
	wopts := []ipc.Option{ipc.WithSchema(schema), ipc.WithAllocator(s.opts.Allocator)}
	if s.opts.Format == FormatStream {
		s.stream = ipc.NewWriter(s.buf, wopts...)
		return nil
	}
	fw, err := ipc.NewFileWriter(s.pos, wopts...)
	if err != nil {
		return fmt.Errorf("arrow sink %s: %w", s.name, err)
	}
	s.fwriter = fw
	return nil
}

// Close finishes the output: the end-of-stream marker (stream) or the footer
// (file), a flush and an fsync, then, for the file format, the rename of
// PATH.tmp to PATH. An output that received no record still gets a valid,
// empty Arrow file with the first table's schema. It releases every Arrow
// buffer. Calling Close again is a no-op.
func (s *Sink) Close(ctx context.Context) error { return s.end(true) }

// Abort discards the output (tracecast.Aborter): PATH.tmp is removed and
// PATH is left as it was; a file-format output written in place (a device
// or a pipe) gets no footer, so that no reader takes it for a whole file.
// A stream written in place (standard output, a pipe, a live pipeline's
// file) keeps what it wrote: Abort closes it. After Close, or again, it
// is a no-op.
func (s *Sink) Abort() error { return s.end(!s.out.Temp() && s.opts.Format == FormatStream) }

// end closes the writers, which releases every Arrow buffer, then renames
// PATH.tmp to PATH (keep: after the footer or end-of-stream marker) or
// removes it (internal/output's Commit and Abort). An error at any step
// removes PATH.tmp too.
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
	if s.stream != nil {
		errs = append(errs, s.stream.Close())
	}
	if s.fwriter != nil {
		errs = append(errs, s.fwriter.Close())
	}
	if s.b != nil {
		s.b.release()
	}
	errs = append(errs, s.buf.Flush())
	return output.Finish(s.out, keep, "arrow sink", s.name, errs...)
}

// posWriter gives a buffered writer the one Seek that ipc.FileWriter uses:
// asking for the current position.
type posWriter struct {
	w   io.Writer
	pos int64
}

func (p *posWriter) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.pos += int64(n)
	return n, err
}

func (p *posWriter) Seek(offset int64, whence int) (int64, error) {
	if offset != 0 || whence != io.SeekCurrent {
		return 0, errors.New("arrow sink: only the current position can be queried")
	}
	return p.pos, nil
}
