package pjdump

import (
	"context"
	"errors"
	"fmt"

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

// Paths: the file written, and its temporary file.
func (o *SinkConfig) Paths() (inputs, outputs []string) {
	if o.Path == "-" {
		return nil, nil
	}
	return nil, []string{o.Path, o.Path + ".tmp"}
}

func newSink(env component.Env, o SinkConfig) (tracecast.Sink, error) {
	return NewSink(o.Path, output.Options{InPlace: env.Live, Logger: env.Logger})
}

// Sink writes entity batches in pj_dump's format, a line per entity in the
// order they come, flushed after every batch. A file is written as
// PATH.tmp until Close renames it (internal/output); Abort removes it.
type Sink struct {
	w   *Writer
	out *output.Sink
}

// NewSink opens path with o (internal/output: "-" is standard output,
// o.Stdout or os.Stdout) and returns a pj_dump sink writing to it.
func NewSink(path string, o output.Options) (*Sink, error) {
	out, err := output.OpenSink("pjdump sink", path, o)
	if err != nil {
		return nil, err
	}
	s := &Sink{w: NewWriter(out.File(), true), out: out}
	out.SetFlush(s.w.Flush)
	return s, nil
}

// Write writes the entities of b; any other record type is an error.
func (s *Sink) Write(_ context.Context, b tracecast.Batch) error {
	if err := s.out.CheckOpen(); err != nil {
		return err
	}
	if b.Items == nil {
		return nil
	}
	es, ok := b.Items.([]tracecast.Entity)
	if !ok {
		return fmt.Errorf("pjdump sink %s: writes entities, not %T", s.out.Name(), b.Items)
	}
	err := s.w.Write(es)
	if err == nil {
		err = s.w.Flush()
	}
	return s.out.Annotate(err)
}

// ForgetsItems: Write formats the entities before it returns, so that
// their batch may be reused (tracecast.ItemsForgetter).
func (s *Sink) ForgetsItems() bool { return true }

// DurableOnClose: a file written as PATH.tmp is durable once renamed, by
// Close (tracecast.CloseDurable).
func (s *Sink) DurableOnClose() bool { return s.out.DurableOnClose() }

// Abort removes PATH.tmp (tracecast.Aborter), leaving PATH as it was; an
// output written in place (standard output, a pipe, a live pipeline's
// file) is closed, keeping what was written.
func (s *Sink) Abort() error { return s.out.Abort() }

// Close flushes the output and renames PATH.tmp to PATH (standard output
// is not closed); on an error PATH.tmp is removed. Calling it again does
// nothing.
func (s *Sink) Close(ctx context.Context) error { return s.out.Close(ctx) }
