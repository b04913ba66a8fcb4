package memlimit

import (
	"os"
	"runtime"
	"runtime/metrics"
	"sync/atomic"
)

// FollowLive keeps the soft memory limit at max(floor, live +
// max(Overhead, live/4)), with live the live heap read again after every
// collection, until stop is called. A command whose working set its own
// limits bound (predict, the report) then holds about that, where the
// collector's pacing alone (GOGC=100) lets the heap reach twice the live
// one and the scavenger gives freed pages back lazily: predict on the
// 2.1 GB trace peaked at 205 MiB of RSS for a live heap of at most 74
// MiB; 117-118 MiB with this limit (120-131 with 2·Overhead as the least
// headroom, 129 with live/2, 150 with 7/4 of the live heap + Overhead),
// in the same time (predict recycles its batches: it allocates little).
// Following the live heap, the limit never forces collections back to
// back as a fixed one would on a run whose working set outgrows it: past
// 64 MiB live it paces as GOGC=25 would. It does nothing when GOMEMLIMIT
// is set (the user's limit).
func FollowLive(floor int64) (stop func()) {
	if os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	var stopped atomic.Bool
	var arm func()
	arm = func() {
		// The sentinel dies at the next collection; its cleanup runs just
		// after it, on the runtime's cleanup goroutine.
		runtime.AddCleanup(new([64]byte), func(struct{}) {
			if !stopped.Load() {
				follow(floor)
				arm()
			}
		}, struct{}{})
	}
	follow(floor)
	arm()
	return func() { stopped.Store(true) }
}

// follow sets the limit from the live heap of the last collection.
func follow(floor int64) {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	live := int64(0)
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = int64(s[0].Value.Uint64())
	}
	SetLimit(max(floor, live+max(Overhead, live/4)))
}
