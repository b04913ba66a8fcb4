package paje

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
)

// TestSteadyStateAllocs: once the reader has seen the trace's containers,
// types and recurring values, reading allocates nothing per line — not the
// values seen once (task ids, pointers, link keys: slab-allocated), not the
// pending links (pooled), not the batches (pooled). Counted over the second
// half of the StarPU trace, in each mode and thread count.
func TestSteadyStateAllocs(t *testing.T) {
	data := gziptest.ReadFile(t, starpuTrace)
	half := bytes.Count(data, []byte{'\n'}) / 2
	for mode, o := range readModes("starpu") {
		for _, threads := range []int{1, 2} {
			o := withThreads(o, threads, 4096)
			// The entities of the first half, to know where it ends.
			var total int
			collectAll := collect(Read, data, o)
			if collectAll.err != nil {
				t.Fatal(collectAll.err)
			}
			total = len(collectAll.es)
			var ms runtime.MemStats
			var seen int
			var start uint64
			var startAt int
			_, err := Read(bytes.NewReader(data), o, func(es []tracecast.Entity) error {
				seen += len(es)
				if start == 0 && seen >= total/2 {
					runtime.ReadMemStats(&ms)
					start, startAt = ms.Mallocs, seen
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			runtime.ReadMemStats(&ms)
			perEntity := float64(ms.Mallocs-start) / float64(seen-startAt)
			t.Logf("%s, %d threads: %d allocations over the last %d entities (~%d lines): %.5f per entity", mode, threads, ms.Mallocs-start, seen-startAt, half, perEntity)
			if perEntity > 0.01 {
				t.Errorf("%s, %d threads: %.4f allocations per entity in the second half", mode, threads, perEntity)
			}
		}
	}
}
