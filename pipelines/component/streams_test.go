package component

import (
	"context"
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
	emit := func(_ context.Context, b tracecast.Batch) error { flushed[b.Stream] = b.Items.(int); return nil }
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
	if err := ps.EndStream(ctx, "x", emit); err != nil {
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
