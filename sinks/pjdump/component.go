package pjdump

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "pjdump" sink.
func Register(r *component.Registry) {
	component.RegisterSink(r, "pjdump", "entities as the lines of pajeng's pj_dump, to a file or standard output", nil, newSink)
}

// SinkConfig are the options of a "pjdump" sink. User-defined fields are
// printed after the standard ones (pj_dump -u) when the entities have them:
// set user_defined on the paje parser. For pj_dump's very lines, set
// pjdump_quirks there too (`tracecast states` does both from its flags).
type SinkConfig struct {
	// Path is the output file, or "-" for standard output.
	Path string `yaml:"path"`
}

// Validate checks the options.
func (o *SinkConfig) Validate() error {
	if o.Path == "" {
		return errors.New("path: required (a file, or - for standard output)")
	}
	return nil
}

func newSink(_ component.Env, o SinkConfig) (tracecast.Sink, error) {
	return NewSink(o.Path, nil)
}

// Sink writes entity batches in pj_dump's format, a line per entity in the
// order they come, flushed after every batch.
type Sink struct {
	w        *Writer
	name     string
	closeOut func() error
	closed   bool
}

// NewSink opens path ("-": stdout, or os.Stdout when stdout is nil) and
// returns a pj_dump sink writing to it.
func NewSink(path string, stdout io.Writer) (*Sink, error) {
	w, name, closeOut, err := output.Create(path, stdout)
	if err != nil {
		return nil, fmt.Errorf("pjdump sink: %w", err)
	}
	return &Sink{w: NewWriter(w, true), name: name, closeOut: closeOut}, nil
}

// Write writes the entities of b; any other record type is an error.
func (s *Sink) Write(_ context.Context, b tracecast.Batch) error {
	if s.closed {
		return fmt.Errorf("pjdump sink %s: write after close", s.name)
	}
	if b.Items == nil {
		return nil
	}
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return fmt.Errorf("pjdump sink %s: writes entities, not %T", s.name, b.Items)
	}
	err := s.w.Write(es)
	if err == nil {
		err = s.w.Flush()
	}
	if err != nil {
		return fmt.Errorf("pjdump sink %s: %w", s.name, err)
	}
	return nil
}

// ForgetsItems: Write formats the entities before it returns, so that
// their batch may be reused (tracecast.ItemsForgetter).
func (s *Sink) ForgetsItems() bool { return true }

// Close flushes and closes the file (never standard output). Calling it
// again does nothing.
func (s *Sink) Close(context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	if err := errors.Join(s.w.Flush(), s.closeOut()); err != nil {
		return fmt.Errorf("pjdump sink %s: %w", s.name, err)
	}
	return nil
}
