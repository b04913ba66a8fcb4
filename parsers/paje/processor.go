package paje

import (
	"context"
	"fmt"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/pipelines/component"
)

// NewProcessor returns a pipeline processor that parses batches of
// tracecast.Line ([]Line items) from one stream and emits batches of
// resolved entities ([]tracecast.Entity items). Once the trace's time unit
// is known (given, or detected at the first event), the batches carry it as
// Batch.Meta["time_unit"], which file sinks record with their schema.
func NewProcessor(opts Options) tracecast.Processor {
	return &processor{p: NewParser(opts)}
}

type processor struct {
	p      *Parser
	stream string
	meta   map[string]string
	// report, when set, receives the parser's statistics at the end of the
	// stream, once its last entities are emitted.
	report func(Stats)
}

func (pr *processor) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	lines, ok := in.Items.([]tracecast.Line)
	if !ok {
		return fmt.Errorf("paje: expects lines, got %T", in.Items)
	}
	pr.stream = in.Stream
	err := pr.draining(ctx, emit, func() error {
		for i := range lines {
			pr.p.truncated = lines[i].Partial
			err := pr.p.Line(lines[i].Data, lines[i].Num)
			pr.p.truncated = false
			if err != nil {
				return err
			}
			if pr.p.Pending() >= BatchSize {
				if err := pr.emit(ctx, emit); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if pr.p.opts.PjdumpQuirks {
		// pj_dump's window holds entities back by the batch they were
		// taken in: take them only where Read does (see draining).
		return nil
	}
	return pr.emit(ctx, emit)
}

// draining runs fn. With PjdumpQuirks, entities go out in batches of
// BatchSize also when one call completes many (a container destroyed with
// its children, the end of the trace), where Read hands them out: the
// window's output depends on it when it is inexact.
func (pr *processor) draining(ctx context.Context, emit tracecast.Emit, fn func() error) error {
	if !pr.p.opts.PjdumpQuirks {
		return fn()
	}
	var drainErr error
	pr.p.sim.drain = func() {
		if drainErr == nil && pr.p.Pending() >= BatchSize {
			drainErr = pr.emit(ctx, emit)
		}
	}
	err := fn()
	pr.p.sim.drain = nil
	if err != nil {
		return err
	}
	return drainErr
}

func (pr *processor) Flush(ctx context.Context, emit tracecast.Emit) error {
	if err := pr.draining(ctx, emit, pr.p.Finish); err != nil {
		return err
	}
	if err := pr.emit(ctx, emit); err != nil {
		return err
	}
	if pr.report != nil {
		pr.report(pr.p.Stats())
	}
	return nil
}

// emit sends what is complete, in a fresh slice: downstream may keep a
// batch while this parser goes on.
func (pr *processor) emit(ctx context.Context, emit tracecast.Emit) error {
	if pr.p.Pending() == 0 {
		return nil
	}
	es := pr.p.Take(make([]tracecast.Entity, 0, pr.p.Pending()))
	if len(es) == 0 {
		return nil
	}
	if pr.meta == nil && pr.p.unit != "" {
		pr.meta = map[string]string{"time_unit": pr.p.unit}
	}
	return emit(ctx, tracecast.Batch{Stream: pr.stream, Items: es, Watermark: pr.p.Watermark(), TypeWatermarks: pr.p.TypeWatermarks(), Meta: pr.meta})
}

// Stats returns the parser's counts (lines, entities, skipped lines by
// reason in lenient mode).
func (pr *processor) Stats() Stats { return pr.p.Stats() }

// LineTimer extracts the timestamp of Paje event lines, for pacing a replay by
// trace time without resolving the trace. Feed it every line in order.
type LineTimer struct {
	hdr   *header
	toks  []token
	scale float64 // units per second, fixed at the first event line
}

// Seconds is Time converted to seconds, the unit detected from the header
// (milliseconds for StarPU) or given with SetUnit.
func (t *LineTimer) Seconds(line []byte) (float64, bool) {
	v, ok := t.Time(line)
	if !ok {
		return 0, false
	}
	if t.scale == 0 {
		t.scale = tracecast.PerSecond(t.hdr.unit())
	}
	return v / t.scale, true
}

// SetUnit fixes the trace's time unit for Seconds (s, ms, us, ns).
func (t *LineTimer) SetUnit(u string) { t.scale = tracecast.PerSecond(u) }

// Time returns the line's timestamp and true for a timed event line.
func (t *LineTimer) Time(line []byte) (float64, bool) {
	if t.hdr == nil {
		t.hdr = newHeader(true)
		line = input.TrimBOM(line)
	}
	toks, r := tokenize(line, t.toks)
	t.toks = toks
	if r != "" || len(toks) == 0 || len(toks[0].b) == 0 {
		return 0, false
	}
	if toks[0].b[0] == '%' {
		t.hdr.line(toks, 0)
		return 0, false
	}
	d := t.hdr.defs[string(toks[0].b)]
	if d == nil || !d.timed() || len(toks) <= int(d.idx[fTime])+1 {
		return 0, false
	}
	return parseFloat(toks[1+d.idx[fTime]].b)
}

// Metrics reports the lines read, the entities emitted and the lines
// skipped by reason (component.MetricsReporter).
func (pr *processor) Metrics(add func(component.Metric)) {
	st := pr.p.Stats()
	add(component.Metric{Name: "lines_total", Help: "trace lines read", Value: float64(st.Lines), Counter: true})
	add(component.Metric{Name: "entities_total", Help: "entities (states, links, variables, events, containers) emitted", Value: float64(st.Entities), Counter: true})
	for reason, n := range st.Skipped {
		add(component.Metric{Name: "bad_lines_total", Help: "lines skipped (lenient mode), by reason", Labels: []string{"reason", reason}, Value: float64(n), Counter: true})
	}
}
