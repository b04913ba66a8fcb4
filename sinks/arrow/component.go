package arrow

import (
	"errors"
	"fmt"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "arrow" sink.
func Register(r *component.Registry) {
	component.RegisterSink(r, "arrow", "records as an Arrow IPC file (footer on close) or stream (readable while written)", nil, newSink)
}

// SinkConfig are the options of an "arrow" sink.
type SinkConfig struct {
	// Path is the output file ("-" is standard output, stream format only).
	Path string `yaml:"path"`
	// Format is file (default: footer on close, PATH.tmp renamed) or stream
	// (each batch flushed; readable while written).
	Format string `yaml:"format"`
	// TimeUnit is recorded as the "time_unit" schema metadata. Default: the
	// unit the records come with (Batch.Meta: the paje parser's, given or
	// detected; a signal's), else "trace" for entities.
	TimeUnit string `yaml:"time_unit"`
	// Records keeps only one record type (entities, samples, windows,
	// predictions, verdicts, alerts); default: the type of the first batch
	// (then another type is an error).
	Records string `yaml:"records"`
}

// Validate checks the options.
func (o *SinkConfig) Validate() error {
	var errs []error
	if o.Path == "" {
		errs = append(errs, errors.New("path: required"))
	}
	f, err := ParseFormat(o.Format)
	if err != nil {
		errs = append(errs, fmt.Errorf("format: %w", err))
	} else if f == FormatFile && o.Path == "-" {
		errs = append(errs, errors.New("path: standard output needs format: stream"))
	}
	errs = append(errs, component.CheckRecords(o.Records))
	return errors.Join(errs...)
}

// Paths: the file written and its temporary file.
func (o *SinkConfig) Paths() (inputs, outputs []string) {
	if o.Path == "-" {
		return nil, []string{o.Path}
	}
	return nil, []string{o.Path, o.Path + ".tmp"}
}

func newSink(env component.Env, o SinkConfig) (tracecast.Sink, error) {
	tables := RecordTables(o.TimeUnit)
	if o.Records != "" {
		// Put the chosen type first: it is the schema of an empty output.
		rt, _ := tracecast.LookupRecordType(o.Records)
		want := rt.Items
		for i, t := range tables {
			if t.ItemsType() == want {
				tables[0], tables[i] = tables[i], tables[0]
			}
		}
	}
	s, err := New(Options{Path: o.Path, Format: Format(o.Format), Tables: tables, FixedTimeUnit: o.TimeUnit != "", Logger: env.Logger, InPlace: env.Live})
	if err != nil {
		return nil, err
	}
	return component.FilterRecords(s, o.Records), nil
}
