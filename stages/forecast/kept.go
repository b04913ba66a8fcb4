package forecast

import (
	"context"

	"github.com/tracecast/tracecast"
)

// Kept collects what a forecast stage emits for a command that scores or
// summarizes a run at its end: the forecasts, and the number of alert
// episodes opened per kind.
type Kept struct {
	Forecasts []tracecast.Forecast
	Opened    map[string]int
}

// Write keeps a batch's forecasts and counts its opened episodes.
func (k *Kept) Write(_ context.Context, b tracecast.Batch) error {
	switch items := b.Items.(type) {
	case []tracecast.Forecast:
		k.Forecasts = append(k.Forecasts, items...)
	case []tracecast.Episode:
		for _, e := range items {
			if e.State == "open" {
				if k.Opened == nil {
					k.Opened = map[string]int{}
				}
				k.Opened[e.Kind]++
			}
		}
	}
	return nil
}

// Close does nothing.
func (k *Kept) Close(context.Context) error { return nil }

// Explained collects the explanation records a forecast stage emits at a
// run's end (its explain option), for a command's table.
type Explained struct {
	Records []tracecast.Explanation
}

// Write keeps a batch's explanation records.
func (k *Explained) Write(_ context.Context, b tracecast.Batch) error {
	if xs, ok := b.Items.([]tracecast.Explanation); ok {
		k.Records = append(k.Records, xs...)
	}
	return nil
}

// Close does nothing.
func (k *Explained) Close(context.Context) error { return nil }
