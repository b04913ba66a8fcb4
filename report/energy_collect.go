package report

import (
	"cmp"
	"context"
	"errors"
	"fmt"

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
	// Series are the power samples kept for the plots, per node: every
	// Stride-th of each node's samples.
	Series map[string][]tracecast.PowerSample
	// MaxSeries bounds the samples kept in Series, all nodes together
	// (0: DefaultMaxSeries). Past it the series are thinned uniformly:
	// every other sample kept is dropped and Stride doubles, so that a
	// long power stream costs bounded memory and its plot still spans the
	// whole run (the plot draws at most --plot-points per node anyway).
	MaxSeries int
	// Stride is how many of a node's samples one kept sample stands for
	// (1 until the first thinning).
	Stride int
	seen   map[string]int // samples of each node so far
	held   int
}

// DefaultMaxSeries is EnergyCollector's default bound on the power samples
// kept for the plots: 48 MB of samples.
const DefaultMaxSeries = 1_000_000

// Write keeps a batch's result or power samples; other records are ignored.
func (c *EnergyCollector) Write(_ context.Context, b tracecast.Batch) error {
	switch items := b.Items.(type) {
	case []*energy.Result:
		c.Result = items[0]
	case []tracecast.PowerSample:
		if c.Series == nil {
			c.Series, c.seen = map[string][]tracecast.PowerSample{}, map[string]int{}
		}
		if c.Stride < 1 {
			c.Stride = 1
		}
		limit := cmp.Or(c.MaxSeries, DefaultMaxSeries)
		for _, s := range items {
			n := c.seen[s.Node]
			c.seen[s.Node] = n + 1
			if n%c.Stride != 0 {
				continue
			}
			c.Series[s.Node] = append(c.Series[s.Node], s)
			if c.held++; c.held > limit {
				if err := c.thin(limit); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// thin keeps every other kept sample of each node (those of its samples
// whose index is a multiple of twice the stride) until at most limit are
// held.
func (c *EnergyCollector) thin(limit int) error {
	for c.held > limit {
		before := c.held
		c.Stride *= 2
		c.held = 0
		for node, s := range c.Series {
			kept := s[:0]
			for i := 0; i < len(s); i += 2 {
				kept = append(kept, s[i])
			}
			clear(s[len(kept):]) // the node names they hold
			c.Series[node] = kept
			c.held += len(kept)
		}
		if c.held == before { // one sample per node: more nodes than the limit
			return fmt.Errorf("energy: power samples of %d nodes, more than the %d kept for the plots (--plot-max-samples)", len(c.Series), limit)
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
