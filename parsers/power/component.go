package power

import (
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "power" parser.
func Register(r *component.Registry) {
	component.RegisterParser(r, "power", "power-meter streams (CSV, JSON lines, RAPL, a Kwollect JSON document) into power samples", DefaultParserConfig, newParser)
}

// ParserConfig are the options of a "power" parser: power-meter lines (CSV,
// JSON lines, RAPL) or a Kwollect JSON document, read as it streams in (see
// docs/energy.md), into []tracecast.PowerSample.
type ParserConfig struct {
	// Format: auto (default), csv, jsonl, rapl, kwollect.
	Format string `yaml:"format"`
	// Lenient counts and skips bad lines instead of failing on the first.
	Lenient bool `yaml:"lenient"`
	// Node is the node of rows without a node column.
	Node string `yaml:"node"`
	// Metric keeps only the records of this metric_id.
	Metric string `yaml:"metric"`
	// MaxLineBytes is the longest accepted line, and the longest record of
	// a Kwollect document (default 1 MiB).
	MaxLineBytes int `yaml:"max_line_bytes"`
}

// DefaultParserConfig returns the defaults of a "power" parser.
func DefaultParserConfig() ParserConfig {
	return ParserConfig{Format: string(Auto), MaxLineBytes: DefaultMaxLineBytes}
}

// Validate checks the options.
func (o *ParserConfig) Validate() error {
	if _, err := ParseFormat(o.Format); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	if o.MaxLineBytes <= 0 {
		return fmt.Errorf("max_line_bytes: must be positive (got %d)", o.MaxLineBytes)
	}
	return nil
}

func newParser(env component.Env, o ParserConfig) (*component.Parser, error) {
	f, err := ParseFormat(o.Format)
	if err != nil {
		return nil, err
	}
	return &component.Parser{Processor: component.NewPerStream(0, func(stream string) (tracecast.Processor, error) {
		if stream == "" {
			stream = env.Stream
		}
		return NewProcessor(Options{Name: stream, Format: f, Lenient: o.Lenient, Node: o.Node, Metric: o.Metric,
			MaxLineBytes: o.MaxLineBytes, Logger: env.Logger})
	}), MaxLineBytes: o.MaxLineBytes}, nil
}
