package pipelines

import (
	"context"
	"errors"
	"fmt"
	"os"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracecast/tracecast/internal/memlimit"

	"github.com/rs/zerolog"
	"golang.org/x/sync/errgroup"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
	"github.com/tracecast/tracecast/pipelines/progress"
)

// Errors Run returns when it had to cancel the graph instead of draining it.
var (
	// ErrShutdownTimeout: a graceful stop did not finish within
	// settings.shutdown_timeout.
	ErrShutdownTimeout = errors.New("graceful stop did not finish in time (settings.shutdown_timeout); stopped hard")
	// ErrHardStop: RunOptions.HardStop was closed (a second signal).
	ErrHardStop = errors.New("stopped hard on request")
)

// hardStopGrace is how long Run waits, after cancelling everything, for
// components to return. A component that ignores its context past that is
// abandoned (and named in the log) so that Run, and the process, can end.
const hardStopGrace = 5 * time.Second

// InputProcessor is an optional interface for stages that need to know which
// input a batch comes from (joins, such as energy from states and power).
// The runtime calls ProcessInput instead of Process when it is implemented.
type InputProcessor interface {
	ProcessInput(ctx context.Context, input string, in tracecast.Batch, emit tracecast.Emit) error
}

// RunOptions tune Run. Registry is required; the rest's zero value logs
// nothing and shows no progress.
type RunOptions struct {
	// Registry resolves component types: a program's components
	// (app/builtin.Registry() for tracecast's own). The runtime sits below
	// the components and cannot name them itself (TestImportRules).
	Registry *component.Registry
	// Logger receives lifecycle, status and component logs.
	Logger zerolog.Logger
	// HardStop, when closed, cancels everything at once (the CLI closes it
	// on a second SIGINT/SIGTERM).
	HardStop <-chan struct{}
	// Progress, when set, is called every ProgressInterval with the
	// aggregated progress of the sources, and once more with Done set at the
	// end. It runs on its own goroutine and must not block for long.
	Progress func(progress.Snapshot)
	// ProgressInterval defaults to 200ms.
	ProgressInterval time.Duration
	// Metrics, when set, gets the pipeline's metrics while it runs
	// (records in and out per component, queue fill, and what the
	// components report: bad lines by reason, open traces, consumer lag,
	// forecast skill).
	Metrics MetricsRegistry
	// Health, when set, says whether the pipeline runs (/readyz).
	Health *Health
	// Embedded marks a command's own pipeline: the user ran a command, not
	// a pipeline, so the start and stop lines are debug-level and a failure
	// is left to the caller to report (once).
	Embedded bool
	// Report, when set, receives the end-of-stream reports of components
	// that make them (component.Env.Report), with the component's id;
	// components log them otherwise. Components call it from their own
	// goroutines, possibly at the same time.
	Report func(id, stream string, report any)
	// MemoryLimit, when set (GOMEMLIMIT's syntax: a command's
	// --memory-limit), is the soft memory limit while the pipeline runs,
	// over GOMEMLIMIT and settings.memory_limit; a bad value is an error
	// before anything runs.
	MemoryLimit string
}

// lifecycle is the event of a start or stop line.
func (g *graph) lifecycle() *zerolog.Event {
	if g.opts.Embedded {
		return g.log.Debug()
	}
	return g.log.Info()
}

// Run builds the pipeline described by cfg and runs it until the input ends
// (replay EOF), ctx is cancelled, or a component fails.
//
// Cancelling ctx is a graceful stop: only the sources see it; they stop, and
// the runtime closes their output channels, so every stage drains its input
// and flushes, and every sink writes what it received and closes (Arrow
// footers). Run then returns nil. If that takes longer than
// settings.shutdown_timeout, or opts.HardStop is closed, the whole graph is
// cancelled at once and Run returns ErrShutdownTimeout or ErrHardStop.
//
// The first component error cancels the whole graph; Run returns it wrapped
// with the component's kind, id and type, as in
// `stage "occ" (occurrence): ...`. A panicking component is recovered and
// reported the same way. Configuration errors are a *ConfigError.
func Run(ctx context.Context, cfg *Config, opts RunOptions) error {
	reg, err := orTestRegistry(opts.Registry)
	if err != nil {
		return err
	}
	p, err := makePlan(reg, cfg)
	if err != nil {
		return err
	}
	for _, w := range cfg.Warnings {
		opts.Logger.Warn().Msg(w)
	}
	l, err := memoryLimit(opts.MemoryLimit, cfg.Settings.MemoryLimit)
	if err != nil {
		return err
	}
	g, err := build(p, opts)
	if err != nil {
		return err
	}
	if err := firstPass(ctx, p, g, opts); err != nil {
		// Built, never run: close what they opened; a failure leaves no
		// output that reads as complete.
		abort := !errors.Is(err, errStoppedEarly)
		for _, s := range g.sinks {
			if cerr := finishSink(context.Background(), s.sink, abort); cerr != nil {
				s.log.Warn().Err(cerr).Msg("closing sink after the first pass")
			}
		}
		if errors.Is(err, errStoppedEarly) {
			g.lifecycle().Msg("pipeline stopped during the first pass")
			return nil
		}
		return err
	}
	if l.Source != "" {
		prev := memlimit.SetLimit(l.Bytes)
		defer memlimit.SetLimit(prev)
		g.log.Info().Str("memory_limit", l.String()).Msg("soft memory limit")
	}
	return g.run(ctx, opts)
}

// memoryLimit is the soft memory limit to set while a pipeline runs: the
// explicit one, else none when GOMEMLIMIT is set (the runtime applied it),
// else the settings' (checked with them). Source "" sets nothing.
func memoryLimit(explicit, settings string) (memlimit.Limit, error) {
	if explicit != "" {
		b, err := memlimit.Parse(explicit)
		if err != nil {
			return memlimit.Limit{}, fmt.Errorf("--memory-limit: %w", err)
		}
		return memlimit.Limit{Bytes: b, Source: "flag"}, nil
	}
	if settings == "" || os.Getenv("GOMEMLIMIT") != "" {
		return memlimit.Limit{}, nil
	}
	b, _ := memlimit.Parse(settings)
	return memlimit.Limit{Bytes: b, Source: "settings"}, nil
}

// envelope is what travels on an edge: a batch and the id of its producer.
type envelope struct {
	from string
	b    tracecast.Batch
}

// node is one goroutine of the running graph.
type node struct {
	id   string // component id (a parser shares its source's)
	kind component.Kind
	typ  string
	log  zerolog.Logger

	in      chan envelope // nil for sources
	pending atomic.Int32  // producers of in still running
	outs    []*node       // consumers, each fed every batch

	src  tracecast.Source
	proc tracecast.Processor
	sink tracecast.Sink

	batchesIn, recordsIn, batchesOut, recordsOut atomic.Int64
	running                                      atomic.Bool
	metrics                                      nodeMetrics
}

// label names the node in errors: `sink "out" (arrow)`.
func (n *node) label() string { return fmt.Sprintf("%s %q (%s)", n.kind, n.id, n.typ) }

// queueName names the node's input queue in the status line.
func (n *node) queueName() string {
	if n.kind == component.KindParser {
		return n.id + ".parser"
	}
	return n.id
}

type sourceInfo struct {
	id       string
	src, out *node // out is the parser node, or src without a parser
	progress component.ProgressReporter
}

type graph struct {
	cfg     *Config
	log     zerolog.Logger
	nodes   []*node // sources, parsers, stages, sinks
	sources []sourceInfo
	sinks   []*node
	opts    RunOptions
	failed  atomic.Bool // a component returned an error: sinks abort
}

func build(p *plan, opts RunOptions) (_ *graph, err error) {
	cfg := p.cfg
	g := &graph{cfg: cfg, log: opts.Logger.With().Str("pipeline", cfg.Name).Logger(), opts: opts}
	producers := map[string]*node{}
	nodeOf := map[*Component]*node{}
	newNode := func(c *Component) *node {
		n := &node{id: c.ID, kind: c.Kind, typ: c.Type,
			log: g.log.With().Str("component", c.ID).Str("kind", string(c.Kind)).Str("type", c.Type).Logger()}
		g.nodes = append(g.nodes, n)
		nodeOf[c] = n
		return n
	}
	env := func(n *node) component.Env {
		e := component.Env{Pipeline: cfg.Name, ID: n.id, Kind: n.kind, Logger: n.log}
		if report := opts.Report; report != nil {
			id := n.id
			e.Report = func(stream string, r any) { report(id, stream, r) }
		}
		return e
	}
	buildErr := func(n *node, err error) error {
		return fmt.Errorf("%s: %w", n.label(), err)
	}

	for _, c := range cfg.Sources {
		src := newNode(c)
		info := sourceInfo{id: c.ID, src: src, out: src}
		e := env(src)
		if c.Parser != nil {
			pn := newNode(c.Parser)
			pe := env(pn)
			pe.Stream = c.ID
			if sn, ok := p.opts[c].(component.StreamNamer); ok && sn.StreamName() != "" {
				pe.Stream = sn.StreamName()
			}
			v, err := p.entries[c.Parser].Build(pe, p.opts[c.Parser])
			if err == nil && (isNil(v) || v.(*component.Parser).Processor == nil) {
				err = errors.New("constructor returned no processor")
			}
			if err != nil {
				return nil, buildErr(pn, err)
			}
			parser := v.(*component.Parser)
			pn.proc = parser
			e.Parser = parser
			src.outs = []*node{pn}
			pn.pending.Store(1)
			info.out = pn
		}
		v, err := p.entries[c].Build(e, p.opts[c])
		if err == nil && isNil(v) {
			err = errors.New("constructor returned no source")
		}
		if err != nil {
			return nil, buildErr(src, err)
		}
		src.src = v.(tracecast.Source)
		info.progress, _ = src.src.(component.ProgressReporter)
		g.sources = append(g.sources, info)
		producers[c.ID] = info.out
	}
	for _, c := range cfg.Stages {
		n := newNode(c)
		v, err := p.entries[c].Build(env(n), p.opts[c])
		if err == nil && isNil(v) {
			err = errors.New("constructor returned no stage")
		}
		if err != nil {
			return nil, buildErr(n, err)
		}
		n.proc = v.(tracecast.Processor)
		producers[c.ID] = n
	}
	// Sinks last: they create output files, which a failure elsewhere
	// should not leave behind. If a sink fails, close those already built.
	defer func() {
		if err != nil {
			for _, s := range g.sinks {
				if cerr := finishSink(context.Background(), s.sink, true); cerr != nil {
					s.log.Warn().Err(cerr).Msg("closing sink after a failed start")
				}
			}
		}
	}()
	live := false
	for _, si := range g.sources {
		if f, ok := si.src.src.(component.Follower); ok && f.Follows() {
			live = true
		}
	}
	for _, c := range cfg.Sinks {
		n := newNode(c)
		e := env(n)
		e.Live = live
		v, err := p.entries[c].Build(e, p.opts[c])
		if err == nil && isNil(v) {
			err = errors.New("constructor returned no sink")
		}
		if err != nil {
			return nil, buildErr(n, err)
		}
		n.sink = v.(tracecast.Sink)
		g.sinks = append(g.sinks, n)
	}

	// Wire the edges: every consumer gets one bounded inbound channel, fed
	// by all its producers and closed when the last of them finishes.
	for _, n := range g.nodes {
		if n.kind != component.KindSource {
			n.in = make(chan envelope, cfg.Settings.EdgeCapacity)
		}
	}
	for _, c := range append(slices.Clone(cfg.Stages), cfg.Sinks...) {
		consumer := nodeOf[c]
		for _, in := range c.Inputs {
			prod := producers[in]
			prod.outs = append(prod.outs, consumer)
			consumer.pending.Add(1)
		}
	}
	return g, nil
}

// isNil reports whether a constructor's result is nil, including a typed
// nil pointer in an interface.
func isNil(v any) bool {
	if v == nil {
		return true
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return rv.IsNil()
	}
	return false
}

// batchLen counts the records of a batch of any slice type.
func batchLen(b tracecast.Batch) int64 {
	if n := b.Len(); n > 0 {
		return int64(n)
	}
	if b.Items == nil {
		return 0
	}
	if v := reflect.ValueOf(b.Items); v.Kind() == reflect.Slice {
		return int64(v.Len())
	}
	return 1
}

// emitter returns n's Emit: it sends the batch to every consumer in turn,
// blocking while a consumer's queue is full (backpressure). The same batch
// value goes to every consumer, which must treat it as read-only.
func emitter(n *node, graphCtx context.Context) tracecast.Emit {
	return func(ctx context.Context, b tracecast.Batch) error {
		// A barrier gets one holder per consumer; a copy that cannot be
		// sent drops the barrier (it never completes).
		bar, _ := b.Items.(*tracecast.Barrier)
		// A stopped caller must not slip batches through while the
		// consumer happens to have room.
		if err := ctx.Err(); err != nil {
			if bar != nil {
				bar.Drop()
			}
			return err
		}
		if bar != nil {
			bar.Hold(len(n.outs))
		}
		if b.Recycle != nil && !recycles(n.outs) {
			b.Recycle = nil // someone may keep the items: never reused
		} else if b.Recycle != nil && len(n.outs) > 1 {
			// Reused once every consumer is done with it: a second
			// consumer (predict's one pass measures R beside the
			// forecasts) made every batch new, and the collector ran
			// four times as often.
			b.Recycle = countdown(len(n.outs), b.Recycle)
		}
		for i, c := range n.outs {
			var err error
			select {
			case c.in <- envelope{from: n.id, b: b}:
			case <-ctx.Done():
				err = ctx.Err()
			case <-graphCtx.Done():
				err = graphCtx.Err()
			}
			if err != nil {
				if bar != nil {
					bar.Drop()
					for range n.outs[i:] {
						bar.Release()
					}
				}
				return err
			}
		}
		if !b.IsControl() {
			n.batchesOut.Add(1)
			n.recordsOut.Add(batchLen(b))
		}
		if n.kind == component.KindSource {
			n.refreshMetrics(false) // a source's metrics, on its goroutine
		}
		return nil
	}
}

func (g *graph) run(ctx context.Context, opts RunOptions) error {
	start := time.Now()
	// hard is cancelled only by a hard stop; it keeps ctx's values but not
	// its cancellation, which is the soft stop.
	hard, cancelHard := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelHard(nil)
	eg, gctx := errgroup.WithContext(hard)
	// Sources also stop when the graph fails (gctx).
	srcCtx, cancelSrc := context.WithCancel(gctx)
	defer cancelSrc()
	stopSoft := context.AfterFunc(ctx, cancelSrc)
	defer stopSoft()

	finished := make(chan struct{})
	var helpers sync.WaitGroup
	helpers.Go(func() { g.watchStop(ctx, finished, cancelHard, opts.HardStop) })
	if iv := g.cfg.Settings.StatusInterval; iv > 0 {
		helpers.Go(func() { g.statusLoop(iv, finished) })
	}
	if opts.Progress != nil {
		iv := opts.ProgressInterval
		if iv <= 0 {
			iv = 200 * time.Millisecond
		}
		helpers.Go(func() { g.progressLoop(start, iv, opts.Progress, finished) })
	}

	if opts.Metrics != nil {
		detach, err := opts.Metrics.Attach(g.collect)
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		defer detach()
	}
	opts.Health.setCheck(g.unready)
	opts.Health.set(true)
	defer opts.Health.setCheck(nil)
	defer opts.Health.set(false)
	g.lifecycle().Int("sources", len(g.sources)).Int("stages", len(g.cfg.Stages)).Int("sinks", len(g.sinks)).
		Int("edge_capacity", g.cfg.Settings.EdgeCapacity).Msg("pipeline started")
	for _, n := range g.nodes {
		g.start(eg, n, srcCtx, gctx)
	}

	waited := make(chan error, 1)
	go func() { waited <- eg.Wait() }()
	var err error
	abandoned := false
	select {
	case err = <-waited:
	case <-gctx.Done():
		// Failure or hard stop: everything is cancelled; give components a
		// bounded time to notice.
		t := time.NewTimer(hardStopGrace)
		select {
		case err = <-waited:
		case <-t.C:
			abandoned = true
			var names []string
			for _, n := range g.nodes {
				if n.running.Load() {
					names = append(names, n.label())
				}
			}
			g.log.Error().Strs("components", names).Dur("grace", hardStopGrace).
				Msg("components ignore cancellation; abandoning them")
			err = fmt.Errorf("components did not stop after cancellation: %s", strings.Join(names, ", "))
		}
		t.Stop()
	}
	close(finished)
	helpers.Wait()

	if cause := context.Cause(hard); errors.Is(cause, ErrShutdownTimeout) || errors.Is(cause, ErrHardStop) {
		if abandoned {
			err = errors.Join(cause, err)
		} else {
			err = cause
		}
	}
	ev := g.lifecycle()
	if err != nil {
		ev = g.lifecycle().Err(err)
		if !g.opts.Embedded {
			ev = g.log.Error().Err(err)
		}
	}
	sinks := zerolog.Dict()
	for _, s := range g.sinks {
		sinks.Int64(s.id, s.recordsIn.Load())
	}
	ev.Dur("elapsed", time.Since(start)).Dict("records_written", sinks).Msg("pipeline stopped")
	return err
}

// start launches n's goroutine in eg, with panic recovery, output closing
// and error labelling common to every kind.
func (g *graph) start(eg *errgroup.Group, n *node, srcCtx, gctx context.Context) {
	n.running.Store(true)
	eg.Go(func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				n.log.Error().Interface("panic", r).Str("stack", string(debug.Stack())).Msg("component panicked")
				err = fmt.Errorf("panic: %v", r)
			}
			if err != nil {
				g.failed.Store(true) // before the consumers see their input end
			}
			for _, c := range n.outs {
				if c.pending.Add(-1) == 0 {
					close(c.in)
				}
			}
			n.running.Store(false)
			if err != nil {
				err = fmt.Errorf("%s: %w", n.label(), err)
			}
		}()
		switch n.kind {
		case component.KindSource:
			return runSource(n, srcCtx, gctx)
		case component.KindSink:
			return runSink(n, gctx, &g.failed)
		default:
			return runProcessor(n, gctx)
		}
	})
}

func runSource(n *node, srcCtx, gctx context.Context) error {
	err := n.src.Run(srcCtx, emitter(n, gctx))
	if err != nil && srcCtx.Err() != nil && gctx.Err() == nil &&
		(errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		n.log.Debug().Msg("source stopped on request")
		return nil // a graceful stop, not a failure
	}
	return err
}

// recycles reports whether a batch sent to outs may be recycled once
// written or processed: each consumer is a sink or a stage that keeps
// nothing of it.
func recycles(outs []*node) bool {
	for _, o := range outs {
		var consumer any = o.sink
		if o.kind == component.KindStage {
			consumer = o.proc // a stage that keeps nothing of its input's items
		}
		if f, ok := consumer.(tracecast.ItemsForgetter); !ok || !f.ForgetsItems() {
			return false
		}
	}
	return len(outs) > 0
}

// countdown is recycle called by the last of n consumers (a consumer that
// does not call it, having failed, leaves the batch to the collector).
func countdown(n int, recycle func()) func() {
	var left atomic.Int32
	left.Store(int32(n))
	return func() {
		if left.Add(-1) == 0 {
			recycle()
		}
	}
}

func runProcessor(n *node, ctx context.Context) error {
	emit := emitter(n, ctx)
	ip, _ := n.proc.(InputProcessor)
	for {
		var env envelope
		var ok bool
		if len(n.in) == 0 {
			n.metrics.idle(n) // about to wait: report the burst just done
		}
		select {
		case env, ok = <-n.in:
		case <-ctx.Done():
			return ctx.Err()
		}
		if !ok {
			break
		}
		if env.b.IsControl() {
			if err := forwardControl(ctx, n, env.b, emit); err != nil {
				return err
			}
			n.refreshMetrics(false) // a stream ended: its last metrics
			continue
		}
		n.batchesIn.Add(1)
		n.recordsIn.Add(batchLen(env.b))
		var err error
		if ip != nil {
			err = ip.ProcessInput(ctx, env.from, env.b, emit)
		} else {
			err = n.proc.Process(ctx, env.b, emit)
		}
		if err != nil {
			return err
		}
		if env.b.Recycle != nil { // set only when this stage forgets its items (recycles)
			env.b.Recycle()
		}
		n.refreshMetrics(false)
	}
	err := n.proc.Flush(ctx, emit)
	n.refreshMetrics(true)
	return err
}

// forwardControl gives a control batch to the processor when it keeps
// per-stream state, then passes it on. A barrier is passed on, then this
// node's hold on it is released.
func forwardControl(ctx context.Context, n *node, b tracecast.Batch, emit tracecast.Emit) error {
	proc := n.proc
	if p, ok := proc.(*component.Parser); ok {
		proc = p.Processor
	}
	sp, _ := proc.(tracecast.StreamProcessor)
	switch it := b.Items.(type) {
	case tracecast.StreamEnd:
		if sp != nil {
			if err := sp.EndStream(ctx, b.Stream, it, emit); err != nil {
				return err
			}
		}
	case tracecast.StreamReset:
		if sp != nil {
			sp.ResetStream(b.Stream)
		}
	case tracecast.StreamDrop:
		if sp != nil {
			sp.DropStream(b.Stream)
		}
	case *tracecast.Barrier:
		defer it.Release()
	}
	return emit(ctx, b)
}

// write hands a sink one batch, unless it is a control batch or records
// the sink does not keep; written counts the records written.
func (n *node) write(ctx context.Context, b tracecast.Batch, written *int64) error {
	if b.IsControl() {
		return nil
	}
	if f, ok := n.sink.(interface{ Accepts(tracecast.Batch) bool }); ok && !f.Accepts(b) {
		return nil // another record type than this sink keeps: not counted
	}
	n.batchesIn.Add(1)
	n.recordsIn.Add(batchLen(b))
	if err := n.sink.Write(ctx, b); err != nil {
		return err
	}
	n.batchesOut.Add(1)
	*written += batchLen(b)
	if b.Recycle != nil {
		b.Recycle()
	}
	return nil
}

// finishSink closes s, or, when the run failed (abort), aborts it if it
// can (tracecast.Aborter): an output valid only once complete is then
// removed instead of renamed into place.
func finishSink(ctx context.Context, s tracecast.Sink, abort bool) error {
	if a, ok := s.(tracecast.Aborter); ok && abort {
		return a.Abort()
	}
	return s.Close(ctx)
}

func runSink(n *node, ctx context.Context, failed *atomic.Bool) (err error) {
	// Barriers wait for Close when the sink is durable only once closed.
	var held []*tracecast.Barrier
	onClose := false
	if cd, ok := n.sink.(tracecast.CloseDurable); ok {
		onClose = cd.DurableOnClose()
	}
	// A Flusher sends what it gathered once nothing more is queued, and
	// before a barrier is released.
	fl, _ := n.sink.(tracecast.Flusher)
	pending := false
	// written counts the records a Flusher holds until its next Flush:
	// records_out_total counts what a sink wrote (flushed).
	var written int64
	flushed := func() { n.recordsOut.Add(written); written = 0 }
	defer func() {
		// Exactly once, also after an error or a panic in Write. The run
		// failed if this sink did, if the graph is cancelled (a failure or
		// a hard stop) or if a component failed but its error has not
		// cancelled the graph yet: its outputs are closed first.
		cerr := finishSink(ctx, n.sink, err != nil || ctx.Err() != nil || failed.Load())
		if cerr == nil && err == nil {
			flushed()
		}
		if cerr != nil {
			if err == nil {
				err = fmt.Errorf("close: %w", cerr)
			} else {
				n.log.Warn().Err(cerr).Msg("closing sink after an error")
			}
		}
		if err == nil {
			for _, b := range held {
				b.Release()
			}
		}
	}()
	for {
		if len(n.in) == 0 {
			n.metrics.idle(n)
		}
		select {
		case env, ok := <-n.in:
			if !ok {
				return nil
			}
			if bar, ok := env.b.Items.(*tracecast.Barrier); ok {
				if pending {
					if err := fl.Flush(ctx); err != nil {
						return err
					}
					pending = false
					flushed()
				}
				if onClose {
					held = append(held, bar)
				} else {
					bar.Release() // Write returned: what came before is durable
				}
				continue
			}
			if err := n.write(ctx, env.b, &written); err != nil {
				return err
			}
			if fl == nil {
				flushed()
			} else {
				pending = pending || written > 0
			}
			// Whatever the envelope was (records, a control batch, a
			// record type this sink does not keep), what was gathered
			// leaves once nothing more is queued: a control batch after
			// the last records must not hold them until the next write.
			if pending && len(n.in) == 0 {
				if err := fl.Flush(ctx); err != nil {
					return err
				}
				pending = false
				flushed()
			}
			n.refreshMetrics(false)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// watchStop turns a soft stop that takes too long, or a HardStop request,
// into a cancellation of the whole graph.
func (g *graph) watchStop(ctx context.Context, finished <-chan struct{}, cancelHard context.CancelCauseFunc, hardStop <-chan struct{}) {
	select {
	case <-finished:
		return
	case <-hardStop:
		g.log.Warn().Msg("hard stop requested: cancelling everything")
		cancelHard(ErrHardStop)
		return
	case <-ctx.Done():
	}
	timeout := g.cfg.Settings.ShutdownTimeout
	g.log.Info().Dur("shutdown_timeout", timeout).Msg("graceful stop: sources stopping, draining the graph")
	t := time.NewTimer(timeout)
	defer t.Stop()
	select {
	case <-finished:
	case <-hardStop:
		g.log.Warn().Msg("hard stop requested: cancelling everything")
		cancelHard(ErrHardStop)
	case <-t.C:
		g.log.Error().Dur("shutdown_timeout", timeout).Msg("graceful stop timed out: cancelling everything")
		cancelHard(ErrShutdownTimeout)
	}
}
