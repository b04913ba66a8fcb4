package iocall

import (
	"errors"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "iocall" parser.
func Register(r *component.Registry) {
	component.RegisterParser(r, "iocall", "I/O-call streams (strace logs, CSV, JSON lines) into I/O calls", DefaultParserConfig, newParser)
}

// ParserConfig is the configuration of an "iocall" parser: strace logs or the
// I/O-call CSV / JSON-lines schema (docs/io.md) into []tracecast.IOCall.
type ParserConfig struct {
	// Format: strace (default), csv, jsonl, or auto (from each stream's
	// name and first line).
	Format string `yaml:"format"`
	// Lenient counts and skips bad lines instead of failing on the first.
	Lenient bool `yaml:"lenient"`
	// MaxLineBytes is the longest accepted line (default 1 MiB).
	MaxLineBytes int `yaml:"max_line_bytes"`
	// MaxPIDs bounds the processes tracked at once (default 65 536).
	MaxPIDs int `yaml:"max_pids"`
	// MaxOpenCalls bounds the unfinished calls held at once (default 16 384).
	MaxOpenCalls int `yaml:"max_open_calls"`
	// MaxFDs bounds the file descriptors tracked over all processes
	// (default 1 Mi).
	MaxFDs int `yaml:"max_fds"`
	// All keeps calls on sockets, pipes and ttys too.
	All bool `yaml:"all"`
}

// DefaultParserConfig returns the defaults of an "iocall" parser.
func DefaultParserConfig() ParserConfig {
	return ParserConfig{MaxLineBytes: DefaultMaxLineBytes, MaxPIDs: DefaultMaxPIDs, MaxOpenCalls: DefaultMaxOpenCalls, MaxFDs: DefaultMaxFDs}
}

// Validate checks the options.
func (o *ParserConfig) Validate() error {
	var errs []error
	if _, err := ParseFormat(o.Format); err != nil {
		errs = append(errs, fmt.Errorf("format: %w", err))
	}
	for _, l := range []struct {
		key string
		v   int
	}{{"max_line_bytes", o.MaxLineBytes}, {"max_pids", o.MaxPIDs}, {"max_open_calls", o.MaxOpenCalls}, {"max_fds", o.MaxFDs}} {
		if l.v <= 0 {
			errs = append(errs, fmt.Errorf("%s: must be positive (got %d)", l.key, l.v))
		}
	}
	return errors.Join(errs...)
}

// Options are the parser options the configuration gives, for stream.
func (o *ParserConfig) Options(stream string) Options {
	return Options{File: stream, Lenient: o.Lenient, MaxLineBytes: o.MaxLineBytes, MaxPIDs: o.MaxPIDs,
		MaxOpenCalls: o.MaxOpenCalls, MaxFDs: o.MaxFDs, All: o.All}
}

func newParser(env component.Env, o ParserConfig) (*component.Parser, error) {
	f, err := ParseFormat(o.Format)
	if err != nil {
		return nil, err
	}
	// One parser per stream: unfinished calls are per process log.
	return &component.Parser{Processor: component.NewPerStream(0, func(stream string) (tracecast.Processor, error) {
		if stream == "" {
			stream = env.Stream
		}
		opts := o.Options(stream)
		opts.Logger = env.Logger
		return NewProcessor(f, opts)
	}), MaxLineBytes: o.MaxLineBytes}, nil
}
