package iocall

import (
	"fmt"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "iocall" parser.
func Register(r *component.Registry) {
	component.RegisterParser(r, "iocall", "I/O-call streams (strace logs, CSV, JSON lines) into I/O calls", nil, newParser)
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
	// All keeps calls on sockets, pipes and ttys too.
	All bool `yaml:"all"`
}

// Validate checks the options.
func (o *ParserConfig) Validate() error {
	if _, err := ParseFormat(o.Format); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	return nil
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
		return NewProcessor(f, Options{File: stream, Lenient: o.Lenient, MaxLineBytes: o.MaxLineBytes, All: o.All, Logger: env.Logger})
	})}, nil
}
