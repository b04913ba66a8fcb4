package paje

import (
	"bytes"
	"math"
	"testing"
	"unsafe"
)

// TestVarBufferGrowth: a variable whose samples are all held (a horizon
// longer than the trace, the default on a short StarPU trace) costs less
// than four times their size in allocations: doubled, the buffer's
// capacity is under twice the samples and its arrays sum to under twice
// that. append grows large slices by a quarter at a time, which cost six
// times their size here, all of it memory the kernel had to fault in.
func TestVarBufferGrowth(t *testing.T) {
	o := DefaultOptions()
	s := newSim(&o)
	s.horizon = math.Inf(1)
	c := &container{name: "c", key: "c"}
	ty := &ptype{name: "v", key: "v", kind: tkVariable}
	sl := s.slot(c, ty)
	const n = 100_000
	got := allocated(func() {
		for i := range n {
			if err := s.bufferVar(c, ty, sl, newVarChange(float64(i), 1, evSetVariable, int64(i))); err != nil {
				t.Fatal(err.reason)
			}
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
	data := gunzip(t, starpuTrace)
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
