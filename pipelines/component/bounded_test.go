package component

import (
	"context"
	"fmt"
	"testing"

	"github.com/tracecast/tracecast"
)

// runProc is a run's processor with a counter and a gauge labelled by its
// run, as the forecast stage's skill.
type runProc struct {
	run string
	n   int
}

func (p *runProc) Process(context.Context, tracecast.Batch, tracecast.Emit) error { p.n++; return nil }
func (p *runProc) Flush(context.Context, tracecast.Emit) error                    { return nil }
func (p *runProc) Metrics(add func(Metric)) {
	add(Metric{Name: "batches_total", Value: float64(p.n), Counter: true})
	add(Metric{Name: "skill", Labels: []string{"run", p.run}, Value: 0.5})
}

// TestPerStreamBoundedOver100000Runs drives 100 000 distinct run ids
// through a PerStream of max_streams 64, as a live service does over
// days: a third end normally, a third are evicted and never end (their
// producer died), a third fail and are dropped (stream_errors: drop) and
// never end. Every per-run map stays bounded: the open streams by
// max_streams, the dropped ones by MaxDropped (it grew by one entry per
// dropped run that never ended), the metrics' gauges by GaugeStreams and
// their counters by their names.
func TestPerStreamBoundedOver100000Runs(t *testing.T) {
	const runs, max = 100_000, 64
	ps := NewPerStream(max, func(s string) (tracecast.Processor, error) { return &runProc{run: s}, nil })
	ps.DropFailedStreams(ps.log)
	ctx := context.Background()
	emit := func(context.Context, tracecast.Batch) error { return nil }
	for i := range runs {
		id := fmt.Sprintf("run-%d", i)
		if err := ps.Process(ctx, tracecast.Batch{Stream: id}, emit); err != nil {
			t.Fatal(err)
		}
		switch i % 3 {
		case 0:
			if err := ps.EndStream(ctx, id, tracecast.StreamEnd{}, emit); err != nil {
				t.Fatal(err)
			}
		case 1: // left open: evicted later, never ended
		case 2:
			ps.DropStream(id) // dropped upstream, never ended
		}
	}
	if len(ps.procs) > max || len(ps.used) > max || len(ps.order) > max {
		t.Errorf("open streams: %d processors, %d used, %d in order; max_streams %d", len(ps.procs), len(ps.used), len(ps.order), max)
	}
	if n := ps.dropped.Len(); n > MaxDropped {
		t.Errorf("%d dropped streams remembered, more than %d", n, MaxDropped)
	}
	if len(ps.gone.ended) > GaugeStreams || len(ps.gone.counters) > 1 {
		t.Errorf("metrics of gone streams: %d gauge sets, %d counters", len(ps.gone.ended), len(ps.gone.counters))
	}
	series := 0
	ps.Metrics(func(Metric) { series++ })
	if series > GaugeStreams+10 {
		t.Errorf("%d metric series for 100 000 runs", series)
	}
	t.Logf("%d runs: %d open, %d dropped remembered (%d forgotten), %d evictions, %d series", runs, len(ps.procs), ps.dropped.Len(), ps.dropped.Forgotten, ps.Evictions, series)
}

// TestBounded: a Bounded forgets the key set longest ago beyond Max, keeps
// a key's place when it is set again, and its queue stays within twice
// its size however many keys come and go.
func TestBounded(t *testing.T) {
	b := Bounded[int]{Max: 3}
	for i, k := range []string{"a", "b", "c", "a", "d"} {
		b.Set(k, i)
	}
	if b.Has("a") || !b.Has("b") || !b.Has("d") || b.Len() != 3 || b.Forgotten != 1 {
		t.Errorf("after a b c a d with max 3: a %v b %v d %v, len %d, forgotten %d", b.Has("a"), b.Has("b"), b.Has("d"), b.Len(), b.Forgotten)
	}
	b.Delete("b")
	b.Set("e", 5)
	if v, _ := b.Get("c"); !b.Has("c") || v != 2 || b.Len() != 3 {
		t.Errorf("after deleting b and setting e: c %v (%d), len %d", b.Has("c"), v, b.Len())
	}
	var c Bounded[struct{}]
	for i := range 100_000 {
		k := fmt.Sprint(i)
		c.Set(k, struct{}{})
		c.Delete(k)
	}
	if c.Len() != 0 || len(c.queue) > 64 {
		t.Errorf("after 100 000 keys set and deleted: %d keys, queue %d", c.Len(), len(c.queue))
	}
}
