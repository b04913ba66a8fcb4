// Package jsonl writes batches as JSON lines: one JSON object per record, one
// record per line. It is the human- and jq-friendly output, used for
// debugging, golden files and small exports.
//
// Entities ([]tracecast.Entity) and raw lines ([]tracecast.Line) go through a
// hand-written encoder (AppendEntity, AppendLine) that allocates nothing per
// record, because a trace has millions of them. Any other item type, such as
// the records of later stages, is written one element of the Items slice
// per line through its AppendJSON (Appender: every record type of the root
// registry has one), else through encoding/json without HTML escaping.
// Every record of the registry carries "record", its type's name, first;
// see tracecast.RecordType and the JSON Schemas in docs/schemas/.
//
// Numbers are written in the shortest form that round-trips (see
// AppendFloat). The output is buffered and flushed after every batch, so a
// reader tailing the file sees whole batches, and on Close.
package jsonl

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"reflect"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
)

// Appender is implemented by record types that encode themselves as one
// JSON object, for speed. AppendJSON appends the object, without a newline.
type Appender interface {
	AppendJSON(dst []byte) []byte
}

// Options configure a Sink.
type Options struct {
	// Path is the output file; "-" is standard output. A file is written
	// as PATH.tmp and renamed by Close (internal/output), unless InPlace.
	Path string
	// Stdout replaces os.Stdout when Path is "-" (for tests and embedding).
	Stdout io.Writer
	// InPlace writes PATH itself, created or truncated: a file read while
	// written (a live pipeline's), each batch flushed.
	InPlace bool
	// Logger receives the warning about a stale PATH.tmp removed.
	Logger zerolog.Logger
	// BufferSize is the write buffer size (default 256 KiB).
	BufferSize int
}

// Sink writes JSON lines. It implements tracecast.Sink and
// tracecast.Aborter; like every sink it is driven by a single goroutine.
type Sink struct {
	w       *bufio.Writer
	out     *output.Sink
	scratch []byte
	records int64
}

// New opens the output and returns a Sink.
func New(opts Options) (*Sink, error) {
	if opts.Path == "" {
		return nil, errors.New("jsonl sink: path is empty (use - for standard output)")
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 256 << 10
	}
	out, err := output.OpenSink("jsonl sink", opts.Path, output.Options{Stdout: opts.Stdout, InPlace: opts.InPlace, Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	s := &Sink{out: out, w: bufio.NewWriterSize(out.File(), opts.BufferSize), scratch: make([]byte, 0, 4096)}
	out.SetFlush(s.w.Flush)
	return s, nil
}

// Records is the number of records written so far.
func (s *Sink) Records() int64 { return s.records }

// Write encodes every record of b and flushes the buffer.
func (s *Sink) Write(ctx context.Context, b tracecast.Batch) error {
	if err := s.out.CheckOpen(); err != nil {
		return err
	}
	var err error
	switch items := b.Items.(type) {
	case nil:
		return nil
	case []tracecast.Entity:
		for i := range items {
			s.scratch = AppendEntity(s.scratch[:0], &items[i])
			if err = s.writeLine(); err != nil {
				break
			}
		}
	case []tracecast.Line:
		for i := range items {
			s.scratch = AppendLine(s.scratch[:0], &items[i])
			if err = s.writeLine(); err != nil {
				break
			}
		}
	default:
		err = s.writeGeneric(items)
	}
	if err == nil {
		err = s.w.Flush()
	}
	return s.out.Annotate(err)
}

// ForgetsItems: Write encodes the records before it returns, so that
// their batch may be reused (tracecast.ItemsForgetter).
func (s *Sink) ForgetsItems() bool { return true }

func (s *Sink) writeLine() error {
	s.scratch = append(s.scratch, '\n')
	_, err := s.w.Write(s.scratch)
	s.records++
	return err
}

// writeGeneric writes each element of a slice (or a single non-slice value)
// on its own line, through Appender when implemented, else encoding/json.
func (s *Sink) writeGeneric(items any) error {
	v := reflect.ValueOf(items)
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return s.writeValue(v)
	}
	for i := range v.Len() {
		if err := s.writeValue(v.Index(i)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Sink) writeValue(v reflect.Value) error {
	var app Appender
	if v.CanAddr() {
		app, _ = v.Addr().Interface().(Appender)
	}
	if app == nil {
		app, _ = v.Interface().(Appender)
	}
	var err error
	if app != nil {
		s.scratch = app.AppendJSON(s.scratch[:0])
	} else {
		s.scratch, err = appendMarshal(s.scratch[:0], v.Interface())
	}
	if err != nil {
		return err
	}
	return s.writeLine()
}

// AppendRecord appends rec as one JSON object, without a newline: an
// entity with AppendEntity, a record that implements Appender (every type
// of the root registry, tracecast.RecordTypes, does) with its AppendJSON —
// both begin with "record" — anything else with encoding/json, without its
// HTML escaping. The Kafka sink's messages use it too.
func AppendRecord(dst []byte, rec any) ([]byte, error) {
	switch r := rec.(type) {
	case tracecast.Entity:
		return AppendEntity(dst, &r), nil
	case *tracecast.Entity:
		return AppendEntity(dst, r), nil
	case Appender:
		return r.AppendJSON(dst), nil
	}
	return appendMarshal(dst, rec)
}

// appendMarshal is encoding/json's encoding without HTML escaping: a
// query "idle>=25%" stays greppable, not "idle\u003e=25%".
func appendMarshal(dst []byte, v any) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return dst, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// DurableOnClose: a file written as PATH.tmp is durable once renamed, by
// Close (tracecast.CloseDurable).
func (s *Sink) DurableOnClose() bool { return s.out.DurableOnClose() }

// Abort removes PATH.tmp (tracecast.Aborter), leaving PATH as it was; an
// output written in place (standard output, a pipe, a live pipeline's
// file) is closed, keeping what was written.
func (s *Sink) Abort() error { return s.out.Abort() }

// Close flushes the buffer and renames PATH.tmp to PATH (standard output
// is not closed); on an error PATH.tmp is removed. Calling Close again is
// a no-op.
func (s *Sink) Close(ctx context.Context) error { return s.out.Close(ctx) }
