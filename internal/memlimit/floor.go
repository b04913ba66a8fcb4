package memlimit

import (
	"os"
	"runtime"
	"runtime/debug"
	"sync"
)

// DefaultFloor is the heap a process may reach before its first
// collection (Floor). The Paje reader's pools and the runtime's start-up
// tables are about 13 MiB live and 30 MiB allocated in all on a 41 MB trace;
// at GOGC=100 the heap's growth to that working size costs five
// collections (10% of that run's CPU time), each marking what the previous
// one kept. Below this floor a short run has none, and a long one its first
// at 40 MiB, then GOGC's pacing as usual: the peak is no higher than that
// pacing gives a live heap of 20 MiB.
const DefaultFloor = 40 << 20

// floor is the state of an active floor: the collector is off (GOGC=-1)
// and the runtime's memory limit is min(limit, bytes), so that the first
// collection comes when the process's memory reaches the floor. After it
// GOGC and limit are restored.
var floor struct {
	sync.Mutex
	active    bool
	bytes     int64
	gcPercent int
	limit     int64 // the limit wanted once the floor is gone (Set, SetLimit)
}

// Floor defers the process's first garbage collection until its Go memory
// reaches bytes, then restores the collector's usual pacing (GOGC) and the
// memory limit: a run that never allocates that much has no collection at
// all. It does nothing when GOGC is set in the environment (the user chose
// the pacing) or bytes is not positive. Call it first thing in main.
func Floor(bytes int64) {
	if bytes <= 0 || os.Getenv("GOGC") != "" {
		return
	}
	floor.Lock()
	defer floor.Unlock()
	if floor.active {
		return
	}
	floor.active, floor.bytes = true, bytes
	floor.gcPercent = debug.SetGCPercent(-1)
	floor.limit = debug.SetMemoryLimit(-1) // GOMEMLIMIT, or none
	debug.SetMemoryLimit(min(floor.limit, bytes))
	// The first collection finds the sentinel unreachable and runs the
	// cleanup (on the runtime's cleanup goroutine, just after it). The
	// sentinel is larger than the tiny allocator's blocks, whose
	// cleanups may never run.
	runtime.AddCleanup(new([64]byte), func(struct{}) { endFloor() }, struct{}{})
}

// endFloor restores the collector's pacing and the wanted memory limit.
func endFloor() {
	floor.Lock()
	defer floor.Unlock()
	if !floor.active {
		return
	}
	floor.active = false
	debug.SetGCPercent(floor.gcPercent)
	debug.SetMemoryLimit(floor.limit)
}

// SetLimit sets the runtime's soft memory limit to bytes, as
// debug.SetMemoryLimit does, and returns the previous one; while a Floor
// is active the runtime's limit stays at most the floor, and bytes takes
// effect when the floor ends.
func SetLimit(bytes int64) int64 {
	floor.Lock()
	defer floor.Unlock()
	if !floor.active {
		return debug.SetMemoryLimit(bytes)
	}
	prev := floor.limit
	floor.limit = bytes
	debug.SetMemoryLimit(min(bytes, floor.bytes))
	return prev
}
