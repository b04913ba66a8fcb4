package paje

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"unsafe"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
)

// TestVarBufferGrowth: a variable whose samples are all held (a horizon
// longer than the trace, the default on a short StarPU trace) costs less
// than four times their size in allocations: doubled, the buffer's
// capacity is under twice the samples and its arrays sum to under twice
// that. append grows large slices by a quarter at a time, which cost six
// times their size here, all of it memory the kernel had to fault in.
func TestVarBufferGrowth(t *testing.T) {
	v := heldVar(newHeldSim(), "c")
	const n = 100_000
	got := allocated(func() {
		for i := range n {
			v.queue(t, float64(i), int64(i))
		}
	})
	held := uint64(n * unsafe.Sizeof(varChange{}))
	t.Logf("%d samples held (%d bytes): %d bytes allocated", n, held, got)
	if got > 4*held {
		t.Errorf("holding %d samples (%d bytes) allocated %d bytes: more than four times their size", n, held, got)
	}
}

// TestChunkArraysSized: a chunk's token and line arrays are made once, at
// a size that holds a StarPU chunk, and reused by the next chunks, which
// the source cuts a few bytes apart at line ends. Grown by append, a
// quarter at a time, they cost five times their size in fresh memory.
func TestChunkArraysSized(t *testing.T) {
	data := gziptest.ReadFile(t, starpuTrace)
	// The events, without the header's short lines.
	data = data[bytes.Index(data, []byte("\n12\t"))+1:]
	chunks := cutChunks(t, data, DefaultChunkBytes)
	if len(chunks) < 4 {
		t.Fatalf("only %d chunks", len(chunks))
	}
	chunks = chunks[:len(chunks)-1] // full ones
	c := newChunk()
	snap := newHeader(false).snap.Load()
	got := allocated(func() {
		for _, d := range chunks {
			c.Data = d
			c.tokenize(1<<20, snap)
		}
	})
	size := uint64(cap(c.toks))*uint64(unsafe.Sizeof(token{})) + uint64(cap(c.lines))*uint64(unsafe.Sizeof(lineRec{}))
	t.Logf("%d chunks: %d bytes allocated, arrays of %d bytes", len(chunks), got, size)
	if got > size+size/4 {
		t.Errorf("tokenizing %d chunks of about %d bytes allocated %d bytes for arrays of %d", len(chunks), DefaultChunkBytes, got, size)
	}
}

// TestProcessorLargeBatch: a batch of many chunks (a source may hand
// thousands of small ones at once) is tokenized a few chunks ahead, so the
// processor makes a few chunks, not one per chunk of the batch with
// arrays for 16 KiB each (which made a race-detector run of the parallel
// tests take 19 GB), and its output is Read's.
func TestProcessorLargeBatch(t *testing.T) {
	data := gziptest.ReadFile(t, starpuTrace)
	parts := cutChunks(t, data, 64)
	if len(parts) < 1000 {
		t.Fatalf("only %d chunks", len(parts))
	}
	for _, threads := range []int{1, 3, 6} {
		o := withThreads(pjOpts(starpuTrace), threads, 0)
		want := collect(Read, data, o)
		cs := make([]tracecast.Chunk, len(parts))
		for i, d := range parts {
			cs[i] = tracecast.Chunk{Data: d, First: i == 0, Lines: int64(bytes.Count(d, []byte{'\n'}))}
		}
		pr := newProcessor(o)
		var got readResult
		emit := func(_ context.Context, b tracecast.Batch) error {
			es := b.Items.([]tracecast.Entity)
			got.es = append(got.es, es...)
			got.batches = append(got.batches, len(es))
			return nil
		}
		ctx := context.Background()
		got.err = pr.Process(ctx, tracecast.Batch{Stream: "s", Items: cs}, emit)
		q := &pr.cq
		// HeapBound counts chunksBound chunks.
		if made := len(q.spare) + len(q.queue); made > chunksInFlight(threads) {
			t.Errorf("threads %d: a batch of %d chunks made %d chunks, more than the %d HeapBound counts", threads, len(cs), made, chunksInFlight(threads))
		}
		if got.err == nil {
			got.err = pr.Flush(ctx, emit)
		}
		got.st = pr.Stats()
		sameRead(t, "one batch of "+itoa(len(cs))+" chunks, threads "+itoa(threads), got, nonEmpty(want), false)
	}
}

// TestFinishHeldInPlace: at the end of a trace cut short, pj_dump's
// window (the entities held back) goes out batch by batch, filtered in
// place. Gathered into one slice, it was copied once more at the very
// end: 10 MB on the 41 MB trace cut in half, the run's peak (60 MiB of
// RSS, 43 without).
func TestFinishHeldInPlace(t *testing.T) {
	data := gziptest.ReadFile(t, starpuTrace)
	data = data[:bytes.LastIndexByte(data[:len(data)/2], '\n')+1]
	pr := newProcessor(pjOpts("cut"))
	emit := func(context.Context, tracecast.Batch) error { return nil }
	ctx := context.Background()
	for i, d := range cutChunks(t, data, DefaultChunkBytes) {
		c := tracecast.Chunk{Data: d, First: i == 0, Lines: int64(bytes.Count(d, []byte{'\n'}))}
		if err := pr.Process(ctx, tracecast.Batch{Stream: "s", Items: []tracecast.Chunk{c}}, emit); err != nil {
			t.Fatal(err)
		}
	}
	// What Flush does, in steps: the last chunks, the end of the trace
	// (the open states close), then the window goes out.
	q := &pr.cq
	q.ctx, q.emit = ctx, emit
	if err := pr.resolveBeyond(0); err != nil {
		t.Fatal(err)
	}
	if err := pr.p.Finish(); err != nil {
		t.Fatal(err)
	}
	pr.p.hold()
	held := 0
	for _, b := range pr.p.held {
		held += len(b.es)
	}
	got := allocated(func() {
		if err := q.sendFn(1); err != nil {
			t.Fatal(err)
		}
	})
	size := uint64(held) * uint64(unsafe.Sizeof(tracecast.Entity{}))
	t.Logf("%d entities held (%d bytes): sending them allocated %d bytes", held, size, got)
	if held < 1000 {
		t.Fatalf("only %d entities held at the cut: not a test of the window", held)
	}
	if got > size/2 {
		t.Errorf("sending %d held entities (%d bytes) allocated %d bytes: a copy of the window", held, size, got)
	}
}

// TestVarBufferReuse: a variable's buffer, outgrown, goes to the next slot
// that grows to its size. A second variable filled like the first costs
// about its final buffer, not twice it (the arrays it would have grown
// through, minFreeVars changes and up, are the first variable's).
func TestVarBufferReuse(t *testing.T) {
	s := newHeldSim()
	fill := func(name string) uint64 {
		v := heldVar(s, name)
		return allocated(func() {
			for i := range 1 << 14 {
				v.queue(t, float64(i), int64(i))
			}
		})
	}
	final := uint64(1<<14) * uint64(unsafe.Sizeof(varChange{}))
	first, second := fill("a"), fill("b")
	t.Logf("final buffer %d bytes: first variable allocated %d, second %d", final, first, second)
	if first < 2*final-final/8 {
		t.Errorf("the first variable allocated %d bytes, want about twice its final buffer (%d)", first, 2*final)
	}
	if second > final+final/8 {
		t.Errorf("the second variable allocated %d bytes, want about its final buffer (%d): outgrown buffers not reused", second, final)
	}
}

// TestVarLateInsert: a change earlier than those queued goes in time
// order, after the queued changes at its own time, and counts as late.
func TestVarLateInsert(t *testing.T) {
	s := newHeldSim()
	v := heldVar(s, "c")
	for i, tm := range []float64{1, 3, 2, 2, 0.5, 3} {
		v.queue(t, tm, int64(i+1))
	}
	var got []string
	for _, ch := range v.sl.vbuf[v.sl.vhead:] {
		got = append(got, fmt.Sprintf("%g@%d", ch.t, ch.line()))
	}
	if want := "0.5@5 1@1 2@3 2@4 3@2 3@6"; strings.Join(got, " ") != want {
		t.Errorf("queued %v, want %s", got, want)
	}
	if s.late != 3 {
		t.Errorf("%d late changes, want 3", s.late)
	}
}

// newHeldSim is a simulator that holds every variable change (a horizon
// longer than any trace).
func newHeldSim() *sim {
	o := DefaultOptions()
	s := newSim(&o)
	s.horizon = math.Inf(1)
	return s
}

// simVar is variable "v" of a container of a simulator, with its slot.
type simVar struct {
	s  *sim
	c  *container
	ty *ptype
	sl *slot
}

func heldVar(s *sim, name string) simVar {
	c := &container{name: name, key: name}
	ty := &ptype{name: "v", key: "v", kind: tkVariable}
	return simVar{s, c, ty, s.slot(c, ty)}
}

// queue sets the variable at time tm, from line line, through bufferVar.
func (v simVar) queue(t *testing.T, tm float64, line int64) {
	t.Helper()
	if err := v.s.bufferVar(v.c, v.ty, v.sl, newVarChange(tm, 1, evSetVariable, line)); err != nil {
		t.Fatal(err.reason)
	}
}
