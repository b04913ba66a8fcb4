package kafka

import (
	"context"
	"fmt"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

// newGenState is the state of a generation reading partition 0.
func newGenState() *genState {
	return &genState{parts: map[int]*partState{0: {next: -1, open: map[string]int64{}}}, traces: map[string]*traceState{},
		pending: map[string][]tracecast.Line{}}
}

// handler returns a function handing s a message of a trace (msg's) at
// offset *off of partition 0, then counted, with g and emit; an error
// fails the test.
func handler(t *testing.T, s *Source, g *genState, emit func(context.Context, tracecast.Batch) error, off *int64) func(trace, value string, hdr ...string) {
	return func(trace, value string, hdr ...string) {
		t.Helper()
		m := msg(trace, value, hdr...)
		m.Offset = *off
		*off++
		if err := s.handle(g, m, context.Background(), emit); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRunStateBounded drives 100 000 distinct run ids through the source's
// per-run state, as a service running for days does: runs that start and
// end leave nothing behind (open traces, the partitions' open lists,
// pending lines), and runs dropped for lost lines whose producer never
// comes back — each remembered so that its later messages are skipped —
// are remembered at most component.MaxDropped: that map grew by one entry
// per such run, for as long as the generation lasted.
func TestRunStateBounded(t *testing.T) {
	const runs = 100_000
	s, err := New(Options{Brokers: []string{"x:1"}, Topic: "lines", Group: "g"})
	if err != nil {
		t.Fatal(err)
	}
	g := newGenState()
	emit := func(context.Context, tracecast.Batch) error { return nil }
	ctx := context.Background()
	off := int64(0)
	handle := handler(t, s, g, emit, &off)
	for i := range runs {
		id := fmt.Sprintf("run-%d", i)
		handle(id, "%h\n1 a\n", HeaderSeq, "0")
		if i%10 == 0 {
			handle(id, "", HeaderEnd, "1") // ends
		} else {
			handle(id, "9 z\n", HeaderSeq, "9") // lines lost: dropped, skipped from then on
		}
		if i%100 == 99 {
			if err := s.flush(ctx, g, emit); err != nil {
				t.Fatal(err)
			}
		}
	}
	if n := len(g.traces); n != 0 {
		t.Errorf("%d open traces after every run ended or was dropped", n)
	}
	if n := len(g.parts[0].open); n != 0 {
		t.Errorf("%d traces listed open in the partition", n)
	}
	if n := len(g.pending) + g.npending; n != 0 {
		t.Errorf("%d pending entries", n)
	}
	if n := g.skipping.Len(); n > component.MaxDropped {
		t.Errorf("%d skipped runs remembered, more than %d", n, component.MaxDropped)
	}
	if want := runs*9/10 - component.MaxDropped; g.skipping.Forgotten != want {
		t.Errorf("%d forgotten, want %d", g.skipping.Forgotten, want)
	}
	t.Logf("%d runs, %d dropped: %d remembered, %d forgotten", runs, runs*9/10, g.skipping.Len(), g.skipping.Forgotten)
	// A forgotten run's later message is still skipped (begun before the
	// start position, as far as the source knows).
	before := s.Stats().Skipped
	handle("run-1", "10 y\n", HeaderSeq, "10")
	if s.Stats().Skipped != before+1 {
		t.Error("a forgotten dropped run's message was not skipped")
	}
}

// TestOpenTracesBounded drives 100 000 distinct run ids whose producers
// all die after their first message, with trace_timeout 0 (nothing ever
// ends them): the open traces stay within MaxOpenTraces, the least
// recently active evicted first — a run that keeps sending is never
// evicted — each eviction dropped downstream and counted, an evicted
// run's later messages skipped, and the partition's commits go on past
// the evicted runs. Before, the open traces grew by one per run for as
// long as the generation lasted.
func TestOpenTracesBounded(t *testing.T) {
	const runs = 100_000
	s, err := New(Options{Brokers: []string{"x:1"}, Topic: "lines", Group: "g", TraceTimeout: 0})
	if err != nil {
		t.Fatal(err)
	}
	if s.o.MaxOpenTraces != DefaultMaxOpenTraces {
		t.Fatalf("MaxOpenTraces %d, want the default %d", s.o.MaxOpenTraces, DefaultMaxOpenTraces)
	}
	g := newGenState()
	drops := map[string]int{}
	emit := func(_ context.Context, b tracecast.Batch) error {
		if d, ok := b.Items.(tracecast.StreamDrop); ok {
			if d.Reason != tracecast.DropEvicted {
				t.Errorf("%s dropped as %q, want %q", b.Stream, d.Reason, tracecast.DropEvicted)
			}
			drops[b.Stream]++
		}
		return nil
	}
	ctx := context.Background()
	off := int64(0)
	handle := handler(t, s, g, emit, &off)
	handle("alive", "%h\n", HeaderSeq, "0")
	alive := 1
	for i := range runs {
		handle(fmt.Sprintf("run-%d", i), "%h\n1 a\n", HeaderSeq, "0")
		if i%1000 == 0 {
			handle("alive", "2 b\n", HeaderSeq, fmt.Sprint(alive))
			alive++
		}
		if i%100 == 99 {
			if err := s.flush(ctx, g, emit); err != nil {
				t.Fatal(err)
			}
		}
	}
	max := DefaultMaxOpenTraces
	if n := len(g.traces); n != max {
		t.Errorf("%d open traces, want %d (the bound)", n, max)
	}
	if n, l := len(g.parts[0].open), g.lru.Len(); n != len(g.traces) || l != len(g.traces) {
		t.Errorf("%d traces listed open in the partition and %d in the activity order, %d open", n, l, len(g.traces))
	}
	wantEvicted := runs + 1 - max
	if st := s.Stats(); st.Evicted != int64(wantEvicted) || len(drops) != wantEvicted {
		t.Errorf("%d evicted, %d dropped downstream, want %d", st.Evicted, len(drops), wantEvicted)
	}
	if drops["alive"] > 0 || g.traces["alive"] == nil {
		t.Error("the run that kept sending was evicted")
	}
	if drops["run-0"] != 1 || drops[fmt.Sprintf("run-%d", wantEvicted-1)] != 1 || drops[fmt.Sprintf("run-%d", wantEvicted)] != 0 {
		t.Errorf("not the least recently active evicted: run-0 %d, run-%d %d, run-%d %d", drops["run-0"], wantEvicted-1,
			drops[fmt.Sprintf("run-%d", wantEvicted-1)], wantEvicted, drops[fmt.Sprintf("run-%d", wantEvicted)])
	}
	// The commits wait for the open runs only: but for the one that
	// kept sending (from offset 0), the first offset still held is the
	// oldest open run's, not run-0's.
	first := off
	for id, o := range g.parts[0].open {
		if id != "alive" {
			first = min(first, o)
		}
	}
	if first <= int64(wantEvicted) {
		t.Errorf("commits held at offset %d, by an evicted run", first)
	}
	// An evicted run's later message is skipped, its end marker ignored.
	before := s.Stats().Skipped
	handle("run-1", "2 c\n", HeaderSeq, "2")
	handle("run-1", "", HeaderEnd, "1")
	if s.Stats().Skipped != before+1 || g.traces["run-1"] != nil {
		t.Error("an evicted run's later message was not skipped")
	}
	t.Logf("%d runs: %d open (max_open_traces), %d evicted", runs+1, len(g.traces), s.Stats().Evicted)
}
