package power

import (
	"context"
	"errors"
	"fmt"

	"github.com/tracecast/tracecast"
)

// NewProcessor returns a pipeline processor that parses batches of lines
// ([]tracecast.Line) of one power stream into batches of samples ([]tracecast.PowerSample
// items): the line formats, CSV, JSON lines and RAPL (Auto guesses from the
// first line). Kwollect's answer is one JSON document, not a line stream: a
// stream of its records (one JSON object per line) is JSON lines.
func NewProcessor(opts Options) (tracecast.Processor, error) {
	if opts.Format == Kwollect {
		return nil, errors.New("power: kwollect is a whole JSON document; in a pipeline send one record per line (format jsonl)")
	}
	if opts.Name == "" {
		opts.Name = "-"
	}
	if opts.Format == "" {
		opts.Format = Auto
	}
	return &processor{rd: &reader{opts: opts, nodes: map[string]string{}, rapl: map[string]*raplState{},
		stats: Stats{Skipped: map[string]int64{}}}}, nil
}

type processor struct {
	rd     *reader
	stream string
}

func (p *processor) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	lines, ok := in.Items.([]tracecast.Line)
	if !ok {
		return fmt.Errorf("power: expects lines, got %T", in.Items)
	}
	p.stream = in.Stream
	// Samples go out in a fresh slice per batch: downstream may keep it.
	p.rd.batch = nil
	p.rd.fn = func(ss []tracecast.PowerSample) error {
		err := emit(ctx, tracecast.Batch{Stream: in.Stream, Items: ss})
		p.rd.batch = nil
		return err
	}
	for _, l := range lines {
		if err := p.rd.line(l.Data, l.Num); err != nil {
			return err
		}
	}
	return p.rd.flush()
}

func (p *processor) Flush(ctx context.Context, emit tracecast.Emit) error { return nil }

// Stats returns what the processor read and skipped.
func (p *processor) Stats() Stats { return p.rd.stats }
