package kafka

import (
	"context"
	"fmt"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/pipelines/component"
)

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
	g := &genState{parts: map[int]*partState{0: {next: -1, open: map[string]int64{}}}, traces: map[string]*traceState{},
		pending: map[string][]tracecast.Line{}}
	emit := func(context.Context, tracecast.Batch) error { return nil }
	ctx := context.Background()
	off := int64(0)
	handle := func(trace, value string, hdr ...string) {
		m := msg(trace, value, hdr...)
		m.Offset = off
		off++
		if err := s.handle(g, m, ctx, emit); err != nil {
			t.Fatal(err)
		}
	}
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
