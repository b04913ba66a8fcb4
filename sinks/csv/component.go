package csv

import (
	"context"
	"errors"
	"fmt"
	"io"

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

func newSink(_ component.Env, o SinkConfig) (tracecast.Sink, error) {
	s, err := NewSink(o.Path, o.Records == "samples", nil)
	if err != nil {
		return nil, err
	}
	return component.FilterRecords(s, o.Records), nil
}

// Sink writes batches of entities or of signal samples as CSV; the first
// batch decides which. It implements tracecast.Sink.
type Sink struct {
	name     string
	out      io.Writer
	closeOut func() error
	samples  bool // the header of an empty output
	ents     *Writer
	smps     *SampleWriter
	closed   bool
}

// NewSink opens path ("-": stdout, or os.Stdout when stdout is nil). An
// output that receives no record gets the header of samples when samples
// is set, else of entities.
func NewSink(path string, samples bool, stdout io.Writer) (*Sink, error) {
	w, name, closeOut, err := output.Create(path, stdout)
	if err != nil {
		return nil, fmt.Errorf("csv sink: %w", err)
	}
	return &Sink{name: name, out: w, closeOut: closeOut, samples: samples}, nil
}

// Write writes the records of b.
func (s *Sink) Write(_ context.Context, b tracecast.Batch) error {
	if s.closed {
		return fmt.Errorf("csv sink %s: write after close", s.name)
	}
	var err error
	switch items := b.Items.(type) {
	case nil:
		return nil
	case []tracecast.Entity:
		if s.smps != nil {
			return fmt.Errorf("csv sink %s: entities after samples (one record type per file)", s.name)
		}
		if s.ents == nil {
			s.ents = NewWriter(s.out)
		}
		err = s.ents.Write(items)
	case []tracecast.Sample:
		if s.ents != nil {
			return fmt.Errorf("csv sink %s: samples after entities (one record type per file)", s.name)
		}
		if s.smps == nil {
			s.smps = NewSampleWriter(s.out)
		}
		err = s.smps.Write(items)
	default:
		return fmt.Errorf("csv sink %s: writes entities or samples, not %T", s.name, b.Items)
	}
	if err != nil {
		return fmt.Errorf("csv sink %s: %w", s.name, err)
	}
	return nil
}

// ForgetsItems: Write formats the records before it returns, so that
// their batch may be reused (tracecast.ItemsForgetter).
func (s *Sink) ForgetsItems() bool { return true }

// Close flushes and closes the file (never standard output). An output
// that received nothing gets its header, also when the pipeline failed:
// the output is then always a prefix of the whole one. Calling Close again
// does nothing.
func (s *Sink) Close(context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	if s.ents == nil && s.smps == nil {
		if s.samples {
			s.smps = NewSampleWriter(s.out)
		} else {
			s.ents = NewWriter(s.out)
		}
	}
	var err error
	switch {
	case s.ents != nil:
		err = s.ents.Flush()
	case s.smps != nil:
		err = s.smps.Flush()
	}
	if err = errors.Join(err, s.closeOut()); err != nil {
		return fmt.Errorf("csv sink %s: %w", s.name, err)
	}
	return nil
}
