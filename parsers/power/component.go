package power

import (
	"fmt"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Register registers the "power" parser.
func Register(r *component.Registry) {
	component.RegisterParser(r, "power", "power-meter lines (CSV, JSON lines, RAPL, Kwollect) into power samples", nil, newParser)
}

// ParserConfig are the options of a "power" parser: power-meter lines (CSV,
// JSON lines, RAPL; see docs/energy.md) into []tracecast.PowerSample.
type ParserConfig struct {
	Format  string `yaml:"format"` // auto (default), csv, jsonl, rapl
	Lenient bool   `yaml:"lenient"`
	Node    string `yaml:"node"`   // node of rows without a node column
	Metric  string `yaml:"metric"` // keep only JSON records of this metric_id
}

// Validate checks the options.
func (o *ParserConfig) Validate() error {
	_, err := o.processor("")
	return err
}

func (o *ParserConfig) processor(name string) (tracecast.Processor, error) {
	f := Auto
	if o.Format != "" {
		var err error
		if f, err = ParseFormat(o.Format); err != nil {
			return nil, fmt.Errorf("format: %w", err)
		}
	}
	return NewProcessor(Options{Name: name, Format: f, Lenient: o.Lenient, Node: o.Node, Metric: o.Metric})
}

func newParser(env component.Env, o ParserConfig) (*component.Parser, error) {
	return &component.Parser{Processor: component.NewPerStream(0, func(stream string) (tracecast.Processor, error) {
		if stream == "" {
			stream = env.Stream
		}
		return o.processor(stream)
	})}, nil
}
