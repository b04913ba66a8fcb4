package paje

import (
	"unsafe"

	"github.com/tracecast/tracecast"
)

// What a reader keeps in memory is bounded by its options, whatever the
// trace's length. The costs below are upper bounds per item, with the maps
// and slices that hold it (TestHeapBound measures them on traces that
// reach each limit).
const (
	// A live container: the container, its entries in the maps of live
	// and destroyed containers and in the live list, its names, and its
	// slots (one per type used on it; four counted).
	bytesPerContainer = 2048
	// An open state: its place on its slot's stack (with the stack's
	// growth), or a pending link: the link, its map entry and its key.
	// Both count against MaxOpenStates.
	bytesPerOpen = 384
	// A variable sample held for reordering, with its buffer's growth.
	bytesPerBuffered = 128
	// A type: its definition, its map entry and name, and its slot on
	// a container that uses it (past the four a container counts).
	bytesPerType = 512
	// Fixed tables: the string table and caches, the pools, the header.
	fixedBytes = 1 << 20
	// How many batches of output pj_dump's window holds in practice (it
	// holds what completed within 0.1 s of trace time of the latest event),
	// and the pool their slices return to.
	heldBatches = 24
)

// HeapBound is an upper bound, in bytes, on the heap Read keeps live with
// these options (zero limits count as their defaults, like NewParser): the
// input chunks in flight and the longest line, the live containers, open
// states and pending links, the variable samples held for reordering, and
// the batches of output held for pj_dump's window. Not counted: the trace's
// definitions (types, entity values, event definitions: small in real
// traces) and what the callback keeps. With the defaults most of it is the
// room allowed for a million live containers; the heap of a real trace is
// a small part of it (12-15 MiB for StarPU traces of any length).
func (o Options) HeapBound() int64 {
	d := DefaultOptions()
	for _, l := range []struct {
		v   *int
		def int
	}{
		{&o.MaxLineBytes, d.MaxLineBytes}, {&o.MaxContainers, d.MaxContainers},
		{&o.MaxOpenStates, d.MaxOpenStates}, {&o.MaxBuffered, d.MaxBuffered}, {&o.MaxTypes, d.MaxTypes}, {&o.Threads, d.Threads},
	} {
		if *l.v <= 0 {
			*l.v = l.def
		}
	}
	line := int64(min(o.MaxLineBytes, MaxChunkBytes)) + 1
	// A chunk: its bytes (more to hold a long line), a record per line (at
	// least two bytes each), a token per two bytes at most and its bitmap
	// (a bit a byte).
	size := int64(o.chunkSize())
	c := max(size, line)
	chunk := c + size/2*int64(unsafe.Sizeof(lineRec{})) + c/2*int64(unsafe.Sizeof(token{})) + c/8
	chunks := int64(chunksInFlight(o.Threads))
	reader := chunks*chunk + line // and the carried part of a line
	held := int64(0)
	if o.PjdumpQuirks {
		held = heldBatches * BatchSize * int64(unsafe.Sizeof(tracecast.Entity{})+unsafe.Sizeof(entMeta{}))
	}
	state := int64(o.MaxContainers)*bytesPerContainer + int64(o.MaxOpenStates)*bytesPerOpen + int64(o.MaxBuffered)*bytesPerBuffered +
		int64(o.MaxTypes)*bytesPerType
	return fixedBytes + reader + held + state
}

// OpenStreamBytes bounds what one open trace costs a stage's parser beside
// its live containers and open states (HeapBound's items): its header (the
// types, entity values and event definitions: 60 KiB for StarPU's), its
// container and type maps, its token buffer. The string table and the
// output buffer are the stage's, shared by its streams (streamShared).
// TestOpenStreamCost measures it on a StarPU trace.
const OpenStreamBytes = 96 << 10
