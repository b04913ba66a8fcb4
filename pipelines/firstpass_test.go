package pipelines

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// twoPassStage is a FirstPasser: its first pass counts the entities it
// sees; the main pass tags each entity with that count, so a sink shows
// whether the first pass ran over the whole input.
type twoPassStage struct {
	mu       sync.Mutex
	offered  []bool // rereadable, per FirstPass call
	first    int    // entities seen by the first pass
	flushed  bool   // the first pass was flushed before the main pass
	failWith string // FirstPass fails with this, when set
}

type countPass struct{ s *twoPassStage }

func (c countPass) Process(_ context.Context, in tracecast.Batch, _ tracecast.Emit) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.first += len(in.Items.([]tracecast.Entity))
	return nil
}

func (c countPass) Flush(context.Context, tracecast.Emit) error {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.flushed = true
	return nil
}

func (s *twoPassStage) FirstPass(rereadable bool) (tracecast.Processor, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.offered = append(s.offered, rereadable)
	if s.failWith != "" && !rereadable {
		return nil, errors.New(s.failWith)
	}
	if !rereadable {
		return nil, nil
	}
	return countPass{s}, nil
}

func (s *twoPassStage) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	s.mu.Lock()
	n, flushed := s.first, s.flushed
	s.mu.Unlock()
	ents := in.Items.([]tracecast.Entity)
	out := make([]tracecast.Entity, len(ents))
	for i, e := range ents {
		e.Type = fmt.Sprintf("first=%d flushed=%v", n, flushed)
		out[i] = e
	}
	return emit(ctx, tracecast.Batch{Stream: in.Stream, Items: out})
}

func (s *twoPassStage) Flush(context.Context, tracecast.Emit) error { return nil }

func firstPassRegistry(st *store, s *twoPassStage) *component.Registry {
	r := testRegistry(st)
	component.RegisterStage(r, "twopass", "", nil, func(component.Env, struct{}) (tracecast.Processor, error) { return s, nil })
	return r
}

// A stage that asks for a first pass over a file gets one: the file read
// again from its start, through the parser and the stages before it, fed
// to its first-pass processor and flushed before the pipeline runs; the
// sinks see the main pass only.
func TestFirstPassOverAFile(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	var data strings.Builder
	for i := 1; i <= 2500; i++ {
		fmt.Fprintf(&data, "%d\n", i)
	}
	if err := os.WriteFile(in, []byte(data.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	st, s := newStore(), &twoPassStage{}
	cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: twopass
settings: {status_interval: 0s}
sources:
  f: {type: file, path: %q, batch_lines: 100, parser: {type: num}}
stages:
  tag: {type: tag, inputs: [f]}
  two: {type: twopass, inputs: [tag]}
sinks:
  out: {type: capture, inputs: [two]}
`, in), "twopass.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(t.Context(), cfg, RunOptions{Registry: firstPassRegistry(st, s)}); err != nil {
		t.Fatal(err)
	}
	if len(s.offered) != 1 || !s.offered[0] {
		t.Fatalf("FirstPass called with %v, want [true]", s.offered)
	}
	got := st.get("out")
	// 2500 lines and the parser's and the tag stage's flush entities.
	if len(got.entities) != 2502 || got.closes != 1 {
		t.Fatalf("sink got %d entities, closed %d times; want 2502 once", len(got.entities), got.closes)
	}
	for _, e := range got.entities {
		if e.Type != "first=2502 flushed=true" {
			t.Fatalf("main pass saw %q: the first pass did not read everything first", e.Type)
		}
	}
}

// Without a source that can read again (here a generator), the stage is
// told so and gets no first pass; an error from FirstPass stops the
// pipeline before anything runs, naming the stage.
func TestFirstPassUnavailable(t *testing.T) {
	for _, fail := range []string{"", "period: required"} {
		st, s := newStore(), &twoPassStage{failWith: fail}
		cfg, err := Parse([]byte(`version: 1
name: gen
settings: {status_interval: 0s}
sources:
  g: {type: gen, count: 30, batch: 10, parser: {type: num}}
stages:
  two: {type: twopass, inputs: [g]}
sinks:
  out: {type: capture, inputs: [two]}
`), "gen.yaml")
		if err != nil {
			t.Fatal(err)
		}
		err = Run(t.Context(), cfg, RunOptions{Registry: firstPassRegistry(st, s)})
		if len(s.offered) != 1 || s.offered[0] {
			t.Fatalf("FirstPass called with %v, want [false]", s.offered)
		}
		got := st.get("out")
		if fail != "" {
			if err == nil || !strings.Contains(err.Error(), `stage "two" (twopass): period: required`) {
				t.Fatalf("err %v, want the stage's", err)
			}
			if st.gen("g").emitted.Load() != 0 || got.closes != 1 {
				t.Fatalf("source emitted %d batches, sink closed %d times: want nothing run, the sink closed", st.gen("g").emitted.Load(), got.closes)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(got.entities) != 31 || got.entities[0].Type != "first=0 flushed=false" {
			t.Fatalf("sink got %d entities (%q), want 31 without a first pass", len(got.entities), got.entities[0].Type)
		}
	}
}

// A graceful stop during the first pass ends the run there: Run returns
// nil, the sinks are closed, the main pass never starts.
func TestFirstPassStopped(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	if err := os.WriteFile(in, []byte("1\n2\n3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st, s := newStore(), &twoPassStage{}
	cfg, err := Parse(fmt.Appendf(nil, `version: 1
name: stop
settings: {status_interval: 0s}
sources:
  f: {type: file, path: %q, parser: {type: num}}
stages:
  two: {type: twopass, inputs: [f]}
sinks:
  out: {type: capture, inputs: [two]}
`, in), "stop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := Run(ctx, cfg, RunOptions{Registry: firstPassRegistry(st, s)}); err != nil {
		t.Fatal(err)
	}
	if got := st.get("out"); len(got.entities) != 0 || got.closes != 1 {
		t.Fatalf("sink got %d entities, closed %d times; want none, once", len(got.entities), got.closes)
	}
}
