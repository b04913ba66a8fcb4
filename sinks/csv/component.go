package csv

import (
	"context"
	"errors"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/output"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "csv" sink.
func Register(r *component.Registry) {
	component.RegisterSink(r, "csv", "entities or signal samples as CSV with a header row, to a file or standard output", nil, newSink)
}

// SinkConfig are the options of a "csv" sink.
type SinkConfig struct {
	// Path is the output file, or "-" for standard output.
	Path string `yaml:"path"`
	// Records keeps only one record type: entities or samples. Default:
	// the type of the first batch (then another type is an error); an
	// output that received nothing has the entities' header.
	Records string `yaml:"records"`
}

// Validate checks the options.
func (o *SinkConfig) Validate() error {
	var errs []error
	if o.Path == "" {
		errs = append(errs, errors.New("path: required (a file, or - for standard output)"))
	}
	switch o.Records {
	case "", "entities", "samples":
	default:
		errs = append(errs, fmt.Errorf("records: %q: the csv sink writes entities or samples", o.Records))
	}
	return errors.Join(errs...)
}

// Paths: the file written, and its temporary file (written in place in a
// live pipeline).
func (o *SinkConfig) Paths() (inputs, outputs []string) { return nil, outputPaths(o.Path) }

func outputPaths(path string) []string {
	if path == "-" {
		return nil
	}
	return []string{path, path + ".tmp"}
}

func newSink(env component.Env, o SinkConfig) (tracecast.Sink, error) {
	s, err := NewSink(o.Path, o.Records == "samples", output.Options{InPlace: env.Live, Logger: env.Logger})
	if err != nil {
		return nil, err
	}
	return component.FilterRecords(s, o.Records), nil
}

// Sink writes batches of entities or of signal samples as CSV; the first
// batch decides which. It implements tracecast.Sink and, for a file
// written as PATH.tmp until Close renames it (internal/output),
// tracecast.Aborter.
type Sink struct {
	out     *output.Sink
	samples bool // the header of an empty output
	ents    *Writer
	smps    *SampleWriter
}

// NewSink opens path with o (internal/output: "-" is standard output,
// o.Stdout or os.Stdout; a file is PATH.tmp until Close renames it, unless
// o.InPlace). An output that receives no record gets the header of samples
// when samples is set, else of entities.
func NewSink(path string, samples bool, o output.Options) (*Sink, error) {
	out, err := output.OpenSink("csv sink", path, o)
	if err != nil {
		return nil, err
	}
	s := &Sink{out: out, samples: samples}
	out.SetFlush(s.flush)
	return s, nil
}

// Write writes the records of b.
func (s *Sink) Write(_ context.Context, b tracecast.Batch) error {
	if err := s.out.CheckOpen(); err != nil {
		return err
	}
	var err error
	switch items := b.Items.(type) {
	case nil:
		return nil
	case []tracecast.Entity:
		if s.smps != nil {
			return fmt.Errorf("csv sink %s: entities after samples (one record type per file)", s.out.Name())
		}
		if s.ents == nil {
			s.ents = NewWriter(s.out.File())
		}
		err = s.ents.Write(items)
	case []tracecast.Sample:
		if s.ents != nil {
			return fmt.Errorf("csv sink %s: samples after entities (one record type per file)", s.out.Name())
		}
		if s.smps == nil {
			s.smps = NewSampleWriter(s.out.File())
		}
		err = s.smps.Write(items)
	default:
		return fmt.Errorf("csv sink %s: writes entities or samples, not %T", s.out.Name(), b.Items)
	}
	return s.out.Annotate(err)
}

// ForgetsItems: Write formats the records before it returns, so that
// their batch may be reused (tracecast.ItemsForgetter).
func (s *Sink) ForgetsItems() bool { return true }

// DurableOnClose: a file written as PATH.tmp is durable once renamed, by
// Close (tracecast.CloseDurable).
func (s *Sink) DurableOnClose() bool { return s.out.DurableOnClose() }

// Abort removes PATH.tmp (tracecast.Aborter): PATH is left as it was. An
// output written in place (standard output, a pipe, a live pipeline's
// file) is closed instead, keeping what was written: a prefix of the
// whole output.
func (s *Sink) Abort() error { return s.out.Abort() }

// Close flushes the output and renames PATH.tmp to PATH (never closes
// standard output); on an error PATH.tmp is removed. An output that
// received nothing gets its header. Calling Close again does nothing.
func (s *Sink) Close(ctx context.Context) error { return s.out.Close(ctx) }

// flush ends the output before Close commits it: an output that received
// nothing gets its header.
func (s *Sink) flush() error {
	if s.ents == nil && s.smps == nil {
		if s.samples {
			s.smps = NewSampleWriter(s.out.File())
		} else {
			s.ents = NewWriter(s.out.File())
		}
	}
	var err error
	switch {
	case s.ents != nil:
		err = s.ents.Flush()
	case s.smps != nil:
		err = s.smps.Flush()
	}
	return err
}
