package parquet

import (
	"errors"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/sinks/arrow"
)

// Register registers the "parquet" sink.
func Register(r *component.Registry) {
	component.RegisterSink(r, "parquet", "records as a Parquet file (snappy or zstd; the Arrow outputs' schemas; footer on close)", DefaultSinkConfig, newSink)
}

// SinkConfig are the options of a "parquet" sink.
type SinkConfig struct {
	// Path is the output file (PATH.tmp until the pipeline ends).
	Path string `yaml:"path"`
	// TimeUnit is recorded as the "time_unit" metadata of entity outputs
	// (default "trace": the trace's own unit).
	TimeUnit string `yaml:"time_unit"`
	// Records keeps only one record type (entities, samples, forecasts,
	// ...); default: the type of the first batch (then another type is an
	// error).
	Records string `yaml:"records"`
	// Compression is the pages' codec: snappy (default), zstd (smaller,
	// slower) or none.
	Compression string `yaml:"compression"`
	// RowGroupRows ends a row group after this many rows.
	RowGroupRows int64 `yaml:"row_group_rows"`
	// RowGroupBytes ends a row group once it holds this many bytes: a row
	// group is held in memory until it ends.
	RowGroupBytes int64 `yaml:"row_group_bytes"`
}

// DefaultSinkConfig has the default row group sizes.
func DefaultSinkConfig() SinkConfig {
	return SinkConfig{Compression: string(Snappy), RowGroupRows: DefaultRowGroupRows, RowGroupBytes: DefaultRowGroupBytes}
}

// Validate checks the options.
func (o *SinkConfig) Validate() error {
	var errs []error
	switch o.Path {
	case "":
		errs = append(errs, errors.New("path: required"))
	case "-":
		errs = append(errs, errors.New("path: a Parquet file is read from its footer: standard output is not supported"))
	}
	if _, err := ParseCompression(o.Compression); err != nil {
		errs = append(errs, fmt.Errorf("compression: %w", err))
	}
	if o.RowGroupRows <= 0 {
		errs = append(errs, fmt.Errorf("row_group_rows: %d, want at least 1", o.RowGroupRows))
	}
	if o.RowGroupBytes <= 0 {
		errs = append(errs, fmt.Errorf("row_group_bytes: %d, want at least 1", o.RowGroupBytes))
	}
	errs = append(errs, component.CheckRecords(o.Records))
	return errors.Join(errs...)
}

func newSink(env component.Env, o SinkConfig) (tracecast.Sink, error) {
	s, err := New(Options{Path: o.Path, Tables: arrow.SinkTables(o.TimeUnit, o.Records), Compression: Compression(o.Compression),
		RowGroupRows: o.RowGroupRows, RowGroupBytes: o.RowGroupBytes, Logger: env.Logger})
	if err != nil {
		return nil, err
	}
	return component.FilterRecords(s, o.Records), nil
}
