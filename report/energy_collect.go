package report

import (
	"context"
	"errors"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/models"
	"github.com/tracecast/tracecast/stages/energy"
)

// EnergyCollector is a pipeline sink on an energy stage with the result
// option (the energy command): it keeps the stage's full result and, when
// the power source is wired to it too, the power samples per node for the
// plot.
type EnergyCollector struct {
	Result *energy.Result
	Series map[string][]tracecast.PowerSample
}

// Write keeps a batch's result or power samples; other records are ignored.
func (c *EnergyCollector) Write(_ context.Context, b tracecast.Batch) error {
	switch items := b.Items.(type) {
	case []*energy.Result:
		c.Result = items[0]
	case []tracecast.PowerSample:
		if c.Series == nil {
			c.Series = map[string][]tracecast.PowerSample{}
		}
		for _, s := range items {
			c.Series[s.Node] = append(c.Series[s.Node], s)
		}
	}
	return nil
}

// Close does nothing.
func (c *EnergyCollector) Close(context.Context) error { return nil }

// Report is the energy report of the collected result with the given
// per-state powers (nil: fitted); an error when the pipeline ended without
// a result.
func (c *EnergyCollector) Report(params *models.StatePowers) (*Energy, error) {
	if c.Result == nil {
		return nil, errors.New("energy: the pipeline ended without a result")
	}
	return NewEnergy(c.Result, params), nil
}
