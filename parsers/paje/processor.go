package paje

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/pipelines/component"
)

// NewProcessor returns a pipeline processor that parses batches of
// tracecast.Line ([]Line items) from one stream and emits batches of
// resolved entities ([]tracecast.Entity items). Once the trace's time unit
// is known (given, or detected at the first event), the batches carry it as
// Batch.Meta["time_unit"], which file sinks record with their schema. With
// opts.Threads > 1, the lines of a large batch are tokenized on that many
// goroutines, then resolved in order: the output is the same.
func NewProcessor(opts Options) tracecast.Processor {
	return newProcessor(opts)
}

func newProcessor(opts Options) *processor {
	pr := &processor{p: NewParser(opts)}
	if pr.p.opts.Threads > 1 {
		pr.parts = make([]tokPart, pr.p.opts.Threads)
	}
	return pr
}

type processor struct {
	p      *Parser
	stream string
	meta   map[string]string
	// report, when set, receives the parser's statistics at the end of the
	// stream, once its last entities are emitted.
	report func(Stats)
	// parts are the threads' tokenized shares of a batch.
	parts []tokPart
	// cq is the queue of tracecast.Chunk input (chunks.go).
	cq chunkQueue
	// wm, twm and vstarts are the watermarks last computed, since the
	// entities emitted since.
	wm           float64
	twm, vstarts map[string]float64
	since        int
}

// minParallelLines is the smallest batch tokenized in parallel: below it,
// starting goroutines costs more than it saves.
const minParallelLines = 256

// tokPart is one thread's share of a batch: its lines' tokens.
type tokPart struct {
	toks    []token
	recs    []lineTok
	scratch []token
}

// lineTok is a tokenized line: its tokens are toks[tok:end].
type lineTok struct {
	tok, end int
	reason   string
	tooLong  bool
}

// streamShared is what the parsers of one stage's streams share: they run
// one at a time, on the stage's goroutine (component.PerStream), and each
// would otherwise hold a string table (86 KiB) and an output buffer as
// large as its largest batch of entities, for as long as its trace is open:
// with thousands of traces open at once on a Kafka topic, that was most of
// a trace's memory. Interned strings are immutable, so sharing the table
// changes no output.
type streamShared struct {
	strs *strTable
	out  []tracecast.Entity
}

// newStreamShared returns the resources for the parsers of one stage.
func newStreamShared() *streamShared { return &streamShared{strs: &strTable{}} }

// borrow gives the parser the shared output buffer for one call.
func (pr *processor) borrow() {
	if sh := pr.p.opts.shared; sh != nil && !pr.p.opts.PjdumpQuirks && pr.p.sim.out == nil {
		pr.p.sim.out, sh.out = sh.out[:0], nil
	}
}

// giveBack returns the output buffer once everything in it was emitted; a
// parser stopped by an error with entities pending keeps it.
func (pr *processor) giveBack() {
	if sh := pr.p.opts.shared; sh != nil && !pr.p.opts.PjdumpQuirks && len(pr.p.sim.out) == 0 && sh.out == nil {
		sh.out, pr.p.sim.out = pr.p.sim.out, nil
	}
}

func (pr *processor) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	if cs, ok := in.Items.([]tracecast.Chunk); ok {
		pr.stream = in.Stream
		return pr.chunks(ctx, cs, emit)
	}
	lines, ok := in.Items.([]tracecast.Line)
	if !ok {
		return fmt.Errorf("paje: expects lines or chunks, got %T", in.Items)
	}
	if pr.cq.used {
		return fmt.Errorf("paje: stream %s: lines after chunks", in.Stream)
	}
	pr.stream = in.Stream
	pr.borrow()
	defer pr.giveBack()
	var err error
	// A truncated last line (Partial) is judged as Line judges it: the
	// parallel path takes whole lines only.
	if pr.parts != nil && len(lines) >= minParallelLines && !lines[len(lines)-1].Partial {
		err = pr.draining(ctx, emit, func() error { return pr.resolveParallel(ctx, lines, emit) })
	} else {
		err = pr.draining(ctx, emit, func() error {
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
	}
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
	pr.p.sim.drain = func() error {
		if drainErr == nil && pr.p.Pending() >= BatchSize {
			drainErr = pr.emit(ctx, emit)
		}
		return drainErr
	}
	err := fn()
	pr.p.sim.drain = nil
	if err != nil {
		return err
	}
	return drainErr
}

// resolveParallel is Process's loop with the lines tokenized in parallel
// first: what Parser.Line does, in two steps.
func (pr *processor) resolveParallel(ctx context.Context, lines []tracecast.Line, emit tracecast.Emit) error {
	p := pr.p
	n := len(pr.parts)
	share := (len(lines) + n - 1) / n
	first := p.stats.Lines == 0 && lines[0].Num <= 1 // the stream's first line may start with a BOM
	var wg sync.WaitGroup
	for k := range pr.parts {
		lo, hi := min(k*share, len(lines)), min((k+1)*share, len(lines))
		work := func() { pr.parts[k].tokenize(lines[lo:hi], p.opts.MaxLineBytes, first && k == 0) }
		if k == n-1 {
			work() // the last share on this goroutine
			continue
		}
		wg.Go(work)
	}
	wg.Wait()
	for k := range pr.parts {
		part := &pr.parts[k]
		for j := range part.recs {
			if p.err != nil {
				return p.err
			}
			r := &part.recs[j]
			num := lines[k*share+j].Num
			p.stats.Lines++
			var err error
			if r.tooLong {
				err = p.bad(num, "line too long", "line longer than "+strconv.Itoa(p.opts.MaxLineBytes)+" bytes (raise --max-line-bytes)")
			} else {
				err = p.tokens(part.toks[r.tok:r.end], r.reason, num)
			}
			if err != nil {
				return err
			}
			if p.Pending() >= BatchSize {
				if err := pr.emit(ctx, emit); err != nil {
					return err
				}
			}
		}
		clear(part.toks) // the lines' bytes go back to the source
	}
	return nil
}

// tokenize tokenizes lines into the part, as Parser.Line would.
func (t *tokPart) tokenize(lines []tracecast.Line, max int, first bool) {
	t.toks, t.recs = t.toks[:0], t.recs[:0]
	for i := range lines {
		data := lines[i].Data
		if i == 0 && first {
			data = input.TrimBOM(data)
		}
		if len(data) > max {
			t.recs = append(t.recs, lineTok{tooLong: true})
			continue
		}
		toks, reason := tokenize(data, t.scratch)
		t.scratch = toks
		r := lineTok{tok: len(t.toks), reason: reason}
		t.toks = append(t.toks, toks...)
		r.end = len(t.toks)
		t.recs = append(t.recs, r)
	}
}

func (pr *processor) Flush(ctx context.Context, emit tracecast.Emit) error {
	pr.borrow()
	defer pr.giveBack()
	if pr.cq.used {
		return pr.flushChunks(ctx, emit)
	}
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
	return emit(ctx, pr.batch(es))
}

// batch is a batch of es with their watermarks, computed again only when
// it is their turn (watermarkEvery).
func (pr *processor) batch(es []tracecast.Entity) tracecast.Batch {
	pr.since += len(es)
	if live := len(pr.p.sim.live); pr.twm == nil || live <= watermarkAlways || pr.since*watermarkEvery >= live {
		pr.wm, pr.twm, pr.vstarts = pr.p.Watermarks()
		pr.since = 0
	}
	return tracecast.Batch{Stream: pr.stream, Items: es, Watermark: pr.wm, TypeWatermarks: pr.twm, VariableStarts: pr.vstarts, Meta: pr.meta}
}

// watermarkEvery: the watermarks cost O(live containers), so they are
// computed again once the entities emitted since the last time number at
// least the live containers / watermarkEvery: O(watermarkEvery) per entity.
// For every batch, a million live containers made a read quadratic (10 s
// for 10^6 open containers, pj_dump 5 s). A watermark computed earlier
// is still a valid one, lower: later entities start at or after it (the
// watermarks only grow); stages finalize a little later, nothing else.
// Each visit is about a cache miss with that many containers: at 16, they
// were a third of `states --format csv` with 160 000 open containers.
const watermarkEvery = 2

// watermarkAlways: up to this many live containers, the watermarks are
// computed for every batch, fresh: a live pipeline hands a batch per line
// or so, and a watermark late by a few entities delays its windows.
const watermarkAlways = 1024

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
		t.hdr.maxDefs = DefaultOptions().MaxTypes // the parser's bound, as memory
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
	d := t.hdr.lookup(toks[0].b)
	if d == nil || !d.timed() || len(toks) <= int(d.idx[fTime])+1 {
		return 0, false
	}
	return parseFloat(toks[1+d.idx[fTime]].b)
}

// Metrics reports the lines read, the entities emitted and the lines
// skipped by reason (component.MetricsReporter).
func (pr *processor) Metrics(add func(component.Metric)) {
	st := pr.p.Stats()
	component.LineMetrics(add, st.Lines, st.Skipped)
	add(component.Metric{Name: "entities_total", Help: "entities (states, links, variables, events, containers) emitted", Value: float64(st.Entities), Counter: true})
}
