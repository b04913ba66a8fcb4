package pipelines

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/app/builtin"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Fake components for runtime tests. They are registered in a test registry
// (testRegistry) next to the real file source and jsonl/arrow sinks.

// genOptions configure the "gen" source: Count lines (-1: until stopped) in
// batches of Batch, one batch every Every.
type genOptions struct {
	Count  int           `yaml:"count"`
	Batch  int           `yaml:"batch"`
	Every  time.Duration `yaml:"every"`
	FailAt int           `yaml:"fail_at"` // fail instead of emitting batch #FailAt (1-based)
	// BarrierEvery emits a checkpoint barrier after every that many
	// batches; its completion is recorded in the store.
	BarrierEvery int `yaml:"barrier_every"`
	st           *store
}

type genSource struct {
	id      string
	o       genOptions
	emitted atomic.Int64 // batches whose emit returned
	lines   atomic.Int64
}

func (g *genSource) SourceProgress() component.SourceProgress {
	total := int64(-1)
	if g.o.Count >= 0 {
		total = int64(g.o.Count)
	}
	return component.SourceProgress{Read: g.lines.Load(), Total: total}
}

func (g *genSource) Run(ctx context.Context, emit tracecast.Emit) error {
	n := 0
	for batch := 1; g.o.Count < 0 || n < g.o.Count; batch++ {
		if g.o.FailAt == batch {
			return errors.New("gen failed")
		}
		if g.o.Every > 0 {
			t := time.NewTimer(g.o.Every)
			select {
			case <-ctx.Done():
				t.Stop()
				return ctx.Err()
			case <-t.C:
			}
		}
		var lines []tracecast.Line
		for i := 0; i < g.o.Batch && (g.o.Count < 0 || n < g.o.Count); i++ {
			n++
			lines = append(lines, tracecast.Line{Data: []byte(strconv.Itoa(n)), Num: int64(n), End: int64(n)})
		}
		if err := emit(ctx, tracecast.Batch{Stream: g.id, Items: lines}); err != nil {
			return err
		}
		g.emitted.Add(1)
		g.lines.Store(int64(n))
		if g.o.BarrierEvery > 0 && batch%g.o.BarrierEvery == 0 {
			lines := n
			b := tracecast.NewBarrier(func() { g.o.st.barrierDone(lines) })
			err := emit(ctx, tracecast.Batch{Stream: g.id, Items: b})
			b.Release()
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// numOptions configure the "num" parser: one Event entity per line, whose
// Start is the line number; Flush emits a "flush" entity.
type numOptions struct {
	FailAt  int64 `yaml:"fail_at"`
	PanicAt int64 `yaml:"panic_at"`
	// Recycle sets Batch.Recycle, which counts in the store.
	Recycle bool `yaml:"recycle"`
	st      *store
}

type numParser struct {
	o      numOptions
	stream string
}

func (p *numParser) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	lines := in.Items.([]tracecast.Line)
	out := make([]tracecast.Entity, 0, len(lines))
	for _, l := range lines {
		if l.Num == p.o.FailAt {
			return fmt.Errorf("%s:%d: bad line", p.stream, l.Num)
		}
		if l.Num == p.o.PanicAt {
			panic("kaboom")
		}
		out = append(out, tracecast.Entity{Nature: tracecast.NatureEvent, Container: in.Stream, Type: "E",
			Start: float64(l.Num), End: float64(l.Num), Value: string(l.Data)})
	}
	b := tracecast.Batch{Stream: in.Stream, Items: out}
	if p.o.Recycle {
		b.Recycle = func() {
			// As a parser refills it: a consumer that reads it after
			// sees other entities.
			for i := range out {
				out[i].Type = "recycled"
			}
			p.o.st.recycled.Add(1)
		}
	}
	return emit(ctx, b)
}

func (p *numParser) Flush(ctx context.Context, emit tracecast.Emit) error {
	return emit(ctx, tracecast.Batch{Stream: p.stream, Items: []tracecast.Entity{
		{Nature: tracecast.NatureEvent, Container: p.stream, Type: "E", Value: "flush"}}})
}

// tagOptions configure the "tag" stage: it copies entities, setting Type to
// the input they came from; Flush emits a "stage-flush" entity.
type tagOptions struct {
	FailAt  int  `yaml:"fail_at"` // batch number
	PanicAt int  `yaml:"panic_at"`
	Forgets bool `yaml:"forgets"` // says it keeps nothing of a batch (it copies)
}

type tagStage struct {
	o       tagOptions
	batches int
}

func (s *tagStage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	return s.ProcessInput(ctx, "?", in, emit)
}

func (s *tagStage) ProcessInput(ctx context.Context, input string, in tracecast.Batch, emit tracecast.Emit) error {
	s.batches++
	if s.batches == s.o.FailAt {
		return errors.New("boom")
	}
	if s.batches == s.o.PanicAt {
		panic("stage kaboom")
	}
	ents := in.Items.([]tracecast.Entity)
	out := make([]tracecast.Entity, len(ents))
	for i, e := range ents {
		e.Type = input
		out[i] = e
	}
	return emit(ctx, tracecast.Batch{Stream: in.Stream, Items: out})
}

func (s *tagStage) ForgetsItems() bool { return s.o.Forgets }

func (s *tagStage) Flush(ctx context.Context, emit tracecast.Emit) error {
	return emit(ctx, tracecast.Batch{Stream: "tag", Items: []tracecast.Entity{{Value: "stage-flush"}}})
}

// captureOptions configure the "capture" sink, which keeps what it gets in
// the test's store.
type captureOptions struct {
	Delay     time.Duration `yaml:"delay"`      // per Write, cut short by ctx
	Block     bool          `yaml:"block"`      // Write waits for store.release (or ctx)
	IgnoreCtx bool          `yaml:"ignore_ctx"` // Write waits for store.release only
	FailAt    int           `yaml:"fail_at"`    // batch number
	PanicAt   int           `yaml:"panic_at"`
	OnClose   bool          `yaml:"on_close"` // durable only once closed
	Forgets   bool          `yaml:"forgets"`  // says it keeps nothing of a batch
	// Gather keeps what Write gets until Flush (a tracecast.Flusher).
	Gather bool `yaml:"gather"`
	// Holdable: while store.hold is set, Write waits as with Block.
	Holdable bool `yaml:"holdable"`
}

type captured struct {
	entities []tracecast.Entity
	batches  int
	closes   int
	flushes  int
}

// barrierRecord is a completed barrier: the lines emitted before it, and
// what the sinks held when it completed.
type barrierRecord struct {
	lines int
	sinks map[string]captured
}

type store struct {
	mu       sync.Mutex
	barriers []barrierRecord
	sinks    map[string]*captured
	gens     map[string]*genSource
	release  chan struct{}
	recycled atomic.Int64 // batches given back (Batch.Recycle)
	hold     atomic.Bool  // holdable sinks wait for release
}

func newStore() *store {
	return &store{sinks: map[string]*captured{}, gens: map[string]*genSource{}, release: make(chan struct{})}
}

func (st *store) get(id string) captured {
	st.mu.Lock()
	defer st.mu.Unlock()
	if c := st.sinks[id]; c != nil {
		return *c
	}
	return captured{}
}

func (st *store) barrierDone(lines int) {
	st.mu.Lock()
	defer st.mu.Unlock()
	r := barrierRecord{lines: lines, sinks: map[string]captured{}}
	for id, c := range st.sinks {
		r.sinks[id] = *c
	}
	st.barriers = append(st.barriers, r)
}

func (st *store) gen(id string) *genSource {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.gens[id]
}

type captureSink struct {
	id       string
	o        captureOptions
	st       *store
	n        int
	gathered []tracecast.Entity
}

// Flush stores what a gathering sink kept (tracecast.Flusher).
func (s *captureSink) Flush(ctx context.Context) error {
	if !s.o.Gather {
		return nil
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	c := s.st.sinks[s.id]
	c.flushes++
	c.entities = append(c.entities, s.gathered...)
	s.gathered = nil
	return nil
}

func (s *captureSink) Write(ctx context.Context, b tracecast.Batch) error {
	s.n++
	if s.n == s.o.FailAt {
		return errors.New("disk full")
	}
	if s.n == s.o.PanicAt {
		panic("sink kaboom")
	}
	switch {
	case s.o.IgnoreCtx:
		<-s.st.release
	case s.o.Block, s.o.Holdable && s.st.hold.Load():
		select {
		case <-s.st.release:
		case <-ctx.Done():
			return ctx.Err()
		}
	case s.o.Delay > 0:
		t := time.NewTimer(s.o.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		}
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	c := s.st.sinks[s.id]
	c.batches++
	if s.o.Gather {
		s.gathered = append(s.gathered, b.Items.([]tracecast.Entity)...)
		return nil
	}
	c.entities = append(c.entities, b.Items.([]tracecast.Entity)...)
	return nil
}

func (s *captureSink) DurableOnClose() bool { return s.o.OnClose }

func (s *captureSink) ForgetsItems() bool { return s.o.Forgets }

func (s *captureSink) Close(ctx context.Context) error {
	if err := s.Flush(ctx); err != nil {
		return err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.sinks[s.id].closes++
	return nil
}

// testRegistry returns the built-ins plus the fakes, all reporting to st.
func testRegistry(st *store) *component.Registry {
	r := builtin.Registry()
	component.RegisterSource(r, "gen", "", func() genOptions { return genOptions{Count: 100, Batch: 10} },
		func(env component.Env, o genOptions) (tracecast.Source, error) {
			o.st = st
			g := &genSource{id: env.ID, o: o}
			st.mu.Lock()
			st.gens[env.ID] = g
			st.mu.Unlock()
			return g, nil
		})
	component.RegisterParser(r, "num", "", nil, func(env component.Env, o numOptions) (*component.Parser, error) {
		o.st = st
		return &component.Parser{
			Processor: &numParser{o: o, stream: env.Stream},
			NewTimeOf: func() func([]byte) (float64, bool) {
				return func(line []byte) (float64, bool) {
					f, err := strconv.ParseFloat(string(line), 64)
					return f, err == nil
				}
			},
		}, nil
	})
	component.RegisterStage(r, "tag", "", nil, func(env component.Env, o tagOptions) (tracecast.Processor, error) {
		return &tagStage{o: o}, nil
	})
	component.RegisterSink(r, "capture", "", nil, func(env component.Env, o captureOptions) (tracecast.Sink, error) {
		st.mu.Lock()
		st.sinks[env.ID] = &captured{}
		st.mu.Unlock()
		return &captureSink{id: env.ID, o: o, st: st}, nil
	})
	return r
}
