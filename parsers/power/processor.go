package power

import (
	"context"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// NewProcessor returns a pipeline processor that parses batches of lines
// ([]tracecast.Line) of one power stream into batches of samples
// ([]tracecast.PowerSample items): CSV, JSON lines, RAPL, and Kwollect's
// answer, a JSON array read as it streams in (one record held at a time;
// see document). Auto guesses from the first line that is not blank or a
// comment: '[' opens a Kwollect document.
func NewProcessor(opts Options) (tracecast.Processor, error) {
	if _, err := ParseFormat(string(opts.Format)); err != nil {
		return nil, err
	}
	return &processor{rd: newReader(opts)}, nil
}

type processor struct {
	rd     *reader
	stream string
}

// emitTo sends the reader's batches downstream, each in a fresh slice:
// downstream may keep it.
func (p *processor) emitTo(ctx context.Context, emit tracecast.Emit) {
	p.rd.batch = nil
	p.rd.fn = func(ss []tracecast.PowerSample) error {
		err := emit(ctx, tracecast.Batch{Stream: p.stream, Items: ss})
		p.rd.batch = nil
		return err
	}
}

func (p *processor) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	lines, ok := in.Items.([]tracecast.Line)
	if !ok {
		return fmt.Errorf("power: expects lines, got %T", in.Items)
	}
	p.stream = in.Stream
	p.emitTo(ctx, emit)
	for _, l := range lines {
		if err := p.rd.line(l.Data, l.Num); err != nil {
			return err
		}
	}
	return p.rd.flush()
}

// Flush ends the stream: a Kwollect document must be complete.
func (p *processor) Flush(ctx context.Context, emit tracecast.Emit) error {
	p.emitTo(ctx, emit)
	if p.rd.doc != nil {
		if err := p.rd.doc.end(); err != nil {
			return err
		}
	}
	if err := p.rd.flush(); err != nil {
		return err
	}
	st := p.rd.stats
	for _, r := range st.Skipped.Reasons() {
		p.rd.opts.Logger.Warn().Int64("lines", st.Skipped[r]).Str("reason", r).Str("power", p.rd.opts.Name).Msg("skipped power lines")
	}
	return nil
}

// Stats returns what the processor read and skipped.
func (p *processor) Stats() Stats { return p.rd.stats }

// Metrics reports the lines read, the samples emitted and the lines
// skipped by reason (component.MetricsReporter).
func (p *processor) Metrics(add func(component.Metric)) {
	st := p.rd.stats
	component.LineMetrics(add, st.Lines, st.Skipped)
	add(component.Metric{Name: "power_samples_total", Help: "power samples a parser emitted", Value: float64(st.Samples), Counter: true})
}
