package jsonl

import (
	"errors"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "jsonl" sink.
func Register(r *component.Registry) {
	component.RegisterSink(r, "jsonl", "records as JSON lines, to a file or standard output", nil, newSink)
}

// SinkConfig are the options of a "jsonl" sink.
type SinkConfig struct {
	// Path is the output file, or "-" for standard output.
	Path string `yaml:"path"`
	// Records keeps only one record type (entities, samples, windows,
	// predictions, verdicts, alerts); default: everything.
	Records string `yaml:"records"`
}

// Validate checks the options.
func (o *SinkConfig) Validate() error {
	if o.Path == "" {
		return errors.New("path: required (a file, or - for standard output)")
	}
	return component.CheckRecords(o.Records)
}

// Paths: the file written, and its temporary file.
func (o *SinkConfig) Paths() (inputs, outputs []string) {
	if o.Path == "-" {
		return nil, nil
	}
	return nil, []string{o.Path, o.Path + ".tmp"}
}

func newSink(env component.Env, o SinkConfig) (tracecast.Sink, error) {
	s, err := New(Options{Path: o.Path, InPlace: env.Live, Logger: env.Logger})
	if err != nil {
		return nil, err
	}
	return component.FilterRecords(s, o.Records), nil
}
