package specs

import (
	"context"

	"github.com/tracecast/tracecast/app/reader"
	"github.com/tracecast/tracecast/parsers/paje"
)

// States are the states command's options (reader.States).
type States = reader.States

// States resolves a trace into its entities (reader.Runner.States).
func (r Runner) States(ctx context.Context, o States) (paje.Stats, error) {
	return r.reader().States(ctx, o)
}

// RunStates is the states command (reader.Runner.RunStates).
func (r Runner) RunStates(ctx context.Context, o States) error {
	return r.reader().RunStates(ctx, o)
}
