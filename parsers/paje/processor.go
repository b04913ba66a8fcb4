package paje

import (
	"context"
	"errors"

	"github.com/tracecast/tracecast"
)

// NewProcessor returns a pipeline processor that parses batches of
// tracecast.Line ([]Line items) from one stream and emits batches of
// resolved entities ([]tracecast.Entity items).
func NewProcessor(opts Options) tracecast.Processor { return &processor{opts: opts} }

type processor struct{ opts Options }

// TODO(spine): replaced by the real implementation.
func (p *processor) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	return errors.New("paje: not implemented yet")
}
func (p *processor) Flush(ctx context.Context, emit tracecast.Emit) error { return nil }

// LineTimer extracts the timestamp of Paje event lines, for pacing a replay by
// trace time without resolving the trace. Feed it every line in order.
type LineTimer struct{}

// Time returns the line's timestamp and true for a timed event line.
func (t *LineTimer) Time(line []byte) (float64, bool) { return 0, false }
