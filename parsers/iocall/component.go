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

// ParserConfig are the options of an "iocall" parser: strace logs or the
// I/O-call CSV / JSON-lines schema (docs/io.md) into []tracecast.IOCall.
type ParserConfig struct {
	Format       string `yaml:"format"` // strace (default), csv, jsonl
	Lenient      bool   `yaml:"lenient"`
	MaxLineBytes int    `yaml:"max_line_bytes"`
	All          bool   `yaml:"all"` // keep calls on sockets, pipes and ttys too
}

// Validate checks the options.
func (o *ParserConfig) Validate() error {
	switch Format(o.Format) {
	case "", FormatStrace, FormatCSV, FormatJSONL:
		return nil
	}
	return fmt.Errorf("format: %q is not strace, csv or jsonl", o.Format)
}

func newParser(env component.Env, o ParserConfig) (*component.Parser, error) {
	f := Format(o.Format)
	if f == "" {
		f = FormatStrace
	}
	if _, err := NewProcessor(f, Options{}); err != nil {
		return nil, err
	}
	// One parser per stream: unfinished calls are per process log.
	return &component.Parser{Processor: component.NewPerStream(0, func(stream string) (tracecast.Processor, error) {
		if stream == "" {
			stream = env.Stream
		}
		return NewProcessor(f, Options{File: stream, Lenient: o.Lenient, MaxLineBytes: o.MaxLineBytes, All: o.All})
	})}, nil
}
