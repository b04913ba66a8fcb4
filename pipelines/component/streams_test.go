package component

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/tracecast/tracecast"
)

// counter counts the batches of its stream and emits the count at Flush.
type counter struct {
	stream string
	n      int
}

func (c *counter) Process(context.Context, tracecast.Batch, tracecast.Emit) error { c.n++; return nil }
func (c *counter) Flush(ctx context.Context, emit tracecast.Emit) error {
	return emit(ctx, tracecast.Batch{Stream: c.stream, Items: c.n})
}

// More streams than max_streams: the least recently active is evicted
// (dropped unflushed, later input ignored until it ends), the others go on,
// and the stage never fails — a service restarted on the same input would
// otherwise fail again.
func TestPerStreamEvictsLeastRecentlyActive(t *testing.T) {
	ps := NewPerStream(2, func(s string) (tracecast.Processor, error) { return &counter{stream: s}, nil })
	ctx := context.Background()
	flushed := map[string]int{}
	emit := func(_ context.Context, b tracecast.Batch) error {
		if n, ok := b.Items.(int); ok {
			flushed[b.Stream] = n
		}
		return nil
	}
	for _, s := range []string{"a", "b", "a", "c", "b", "a", "c"} {
		if err := ps.Process(ctx, tracecast.Batch{Stream: s}, emit); err != nil {
			t.Fatalf("stream %s: %v", s, err)
		}
	}
	// c evicts b (a was active after b); b's later batch is ignored.
	if ps.Evictions != 1 {
		t.Fatalf("%d evictions, want 1", ps.Evictions)
	}
	if err := ps.Flush(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if _, ok := flushed["b"]; ok || len(flushed) != 2 || flushed["a"] != 3 || flushed["c"] != 2 {
		t.Fatalf("flushed %v: want a with 3 batches, c with 2, b evicted", flushed)
	}
	// An evicted stream's later batches are ignored until it ends.
	ps = NewPerStream(1, func(s string) (tracecast.Processor, error) { return &counter{stream: s}, nil })
	flushed = map[string]int{}
	for _, s := range []string{"x", "y", "x", "x"} {
		if err := ps.Process(ctx, tracecast.Batch{Stream: s}, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := ps.EndStream(ctx, "x", tracecast.StreamEnd{}, emit); err != nil {
		t.Fatal(err)
	}
	if err := ps.Process(ctx, tracecast.Batch{Stream: "x"}, emit); err != nil { // x starts again: y goes
		t.Fatal(err)
	}
	if err := ps.Flush(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if _, ok := flushed["y"]; ok || flushed["x"] != 1 {
		t.Fatalf("flushed %v: want x with its 1 batch after its restart, y evicted", flushed)
	}
}

// An evicted stream is dropped for good, downstream too: the stage after
// the evicting one gets a StreamDrop (in order with the data) and forgets
// what it holds of the stream; at the stream's end marker neither flushes
// anything for it (a stage that flushed its part of the trace published a
// likelihood of 0.01 where the whole trace gives 0). Its later batches and
// its end are counted.
func TestPerStreamEvictionDropsDownstream(t *testing.T) {
	ctx := context.Background()
	var out []string
	down := NewPerStream(0, func(s string) (tracecast.Processor, error) { return &counter{stream: s}, nil })
	// downEmit is the runtime's forwarding of control items to down.
	downEmit := func(ctx context.Context, b tracecast.Batch) error {
		switch it := b.Items.(type) {
		case tracecast.StreamDrop:
			if it.Reason != tracecast.DropEvicted {
				t.Errorf("drop of %s: reason %q", b.Stream, it.Reason)
			}
			down.DropStream(b.Stream)
			return nil
		case int:
			out = append(out, fmt.Sprintf("%s:%d", b.Stream, it))
			return nil
		}
		return down.Process(ctx, b, func(_ context.Context, b tracecast.Batch) error {
			out = append(out, fmt.Sprintf("%s:%d", b.Stream, b.Items.(int)))
			return nil
		})
	}
	// up passes every batch on (a parser) and keeps one stream at a time.
	up := NewPerStream(1, func(s string) (tracecast.Processor, error) { return passOn{}, nil })
	for _, s := range []string{"x", "x", "y", "x", "y"} {
		if err := up.Process(ctx, tracecast.Batch{Stream: s, Items: []int{1, 2}}, downEmit); err != nil {
			t.Fatal(err)
		}
	}
	// y evicted x; x's third batch is ignored (2 records).
	if up.Evictions != 1 || up.Ignored != 2 {
		t.Fatalf("%d evictions, %d records ignored: want 1 and 2", up.Evictions, up.Ignored)
	}
	end := func(s string) {
		if err := up.EndStream(ctx, s, tracecast.StreamEnd{}, downEmit); err != nil {
			t.Fatal(err)
		}
		if err := down.EndStream(ctx, s, tracecast.StreamEnd{}, downEmit); err != nil { // the marker goes on
			t.Fatal(err)
		}
	}
	end("x")
	end("y")
	if want := []string{"y:2"}; !slices.Equal(out, want) {
		t.Fatalf("flushed downstream %v, want %v: the evicted x must be flushed nowhere", out, want)
	}
	if up.IgnoredEnds != 1 || down.IgnoredEnds != 1 {
		t.Fatalf("ignored ends: %d up, %d down; want 1 each", up.IgnoredEnds, down.IgnoredEnds)
	}
	// After its end, x may start again, whole.
	if err := up.Process(ctx, tracecast.Batch{Stream: "x", Items: []int{1}}, downEmit); err != nil {
		t.Fatal(err)
	}
	end("x")
	if want := []string{"y:2", "x:1"}; !slices.Equal(out, want) {
		t.Fatalf("flushed downstream %v, want %v", out, want)
	}
}

// passOn emits every batch it is given.
type passOn struct{}

func (passOn) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	return emit(ctx, in)
}
func (passOn) Flush(context.Context, tracecast.Emit) error { return nil }

// startThenEnd gives ps a batch of each stream, then ends "dead" by
// timeout and "ok" by its end marker.
func startThenEnd(t *testing.T, ps *PerStream, emit tracecast.Emit, streams ...string) {
	t.Helper()
	ctx := context.Background()
	for _, s := range streams {
		if err := ps.Process(ctx, tracecast.Batch{Stream: s}, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := ps.EndStream(ctx, "dead", tracecast.StreamEnd{Reason: tracecast.EndTimeout}, emit); err != nil {
		t.Fatal(err)
	}
	if err := ps.EndStream(ctx, "ok", tracecast.StreamEnd{}, emit); err != nil {
		t.Fatal(err)
	}
}

// A stream ended by the source's inactivity timeout is flushed (its final
// records, from the lines received) and counted as such; one ended by its
// marker is not.
func TestPerStreamCountsTimedOutStreams(t *testing.T) {
	ps := NewPerStream(0, func(s string) (tracecast.Processor, error) { return &counter{stream: s}, nil })
	flushed := map[string]int{}
	emit := func(_ context.Context, b tracecast.Batch) error { flushed[b.Stream] = b.Items.(int); return nil }
	startThenEnd(t, ps, emit, "dead", "ok")
	if flushed["dead"] != 1 || flushed["ok"] != 1 || ps.TimedOut != 1 {
		t.Fatalf("flushed %v, %d timed out: want both flushed, 1 timed out", flushed, ps.TimedOut)
	}
	var m float64
	ps.Metrics(func(x Metric) {
		if x.Name == "streams_timed_out_total" {
			m = x.Value
		}
	})
	if m != 1 {
		t.Fatalf("streams_timed_out_total %v, want 1", m)
	}
}

// reasoned records how its stream ended, when told, and emits it at Flush.
type reasoned struct {
	stream, how string
}

func (r *reasoned) EndReason(end tracecast.StreamEnd)                              { r.how = end.EndedBy() }
func (r *reasoned) Process(context.Context, tracecast.Batch, tracecast.Emit) error { return nil }
func (r *reasoned) Flush(ctx context.Context, emit tracecast.Emit) error {
	return emit(ctx, tracecast.Batch{Stream: r.stream, Items: r.how})
}

// A processor that is a tracecast.EndReasoner learns how its stream ended
// before the Flush that ends it: by timeout, by its marker; at the end of
// input (a file) it is not told (its own end).
func TestPerStreamTellsHowAStreamEnded(t *testing.T) {
	ctx := context.Background()
	ps := NewPerStream(0, func(s string) (tracecast.Processor, error) { return &reasoned{stream: s}, nil })
	got := map[string]string{}
	emit := func(_ context.Context, b tracecast.Batch) error { got[b.Stream] = b.Items.(string); return nil }
	startThenEnd(t, ps, emit, "dead", "ok", "file")
	if err := ps.Flush(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if want := map[string]string{"dead": "timeout", "ok": "marker", "file": ""}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ends %v, want %v", got, want)
	}
}
