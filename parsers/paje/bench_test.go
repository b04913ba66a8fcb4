package paje

import (
	"bytes"
	"io"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/sinks/pjdump"
)

// benchData is the trace the benchmarks read: TRACECAST_BENCH_TRACE (a
// plain or gzip trace, read into memory), or the StarPU trace of the
// repository.
func benchData(b *testing.B) []byte {
	b.Helper()
	if p := os.Getenv("TRACECAST_BENCH_TRACE"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	return gziptest.ReadFile(b, starpuTrace)
}

// benchThreads are the thread counts the reader benchmarks run with: 1,
// and GOMAXPROCS when it is more.
func benchThreads() []int {
	if n := runtime.GOMAXPROCS(0); n > 1 {
		return []int{1, n}
	}
	return []int{1}
}

// reportPerLine reports allocations per line of the input: the benchmark
// must have run b.N reads of data.
func reportPerLine(b *testing.B, data []byte, before runtime.MemStats) {
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	lines := float64(bytes.Count(data, []byte{'\n'})) * float64(b.N)
	b.ReportMetric(float64(after.Mallocs-before.Mallocs)/lines, "allocs/line")
}

// BenchmarkTokenize measures the tokenizer alone (set TRACECAST_BENCH_TRACE
// to a plain trace to use another file).
func BenchmarkTokenize(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	var toks []token
	for b.Loop() {
		for line := range bytes.SplitSeq(data, []byte{'\n'}) {
			toks, _ = tokenize(line, toks)
		}
	}
}

// BenchmarkChunkTokenize measures the tokenizing goroutines' work on the
// trace's chunks: splitting, tokenizing and decoding their lines.
func BenchmarkChunkTokenize(b *testing.B) {
	data := benchData(b)
	p := NewParser(DefaultOptions())
	var chunks []*chunk
	sp := input.NewSplitter(bytes.NewReader(data), DefaultChunkBytes, p.opts.MaxLineBytes)
	for {
		c := newChunk()
		if ok, _ := sp.Fill(&c.Chunk); !ok {
			break
		}
		chunks = append(chunks, c)
	}
	// The definitions and types, as the parser knows them once it has
	// read the first chunks.
	for _, c := range chunks[:min(len(chunks), 4)] {
		c.tokenize(p.opts.MaxLineBytes, p.hdr.snap.Load())
		if err := p.chunk(c, func(int) error { p.Take(nil); return nil }); err != nil {
			b.Fatal(err)
		}
	}
	snap := p.hdr.snap.Load()
	for _, c := range chunks {
		c.tokenize(p.opts.MaxLineBytes, snap) // their slices grown
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for _, c := range chunks {
			c.tokenize(p.opts.MaxLineBytes, snap)
		}
	}
}

// BenchmarkResolve measures the whole reader: lines, header, reorder buffer
// and state resolution into entities, with 1 and GOMAXPROCS threads.
func BenchmarkResolve(b *testing.B) {
	data := benchData(b)
	for _, threads := range benchThreads() {
		b.Run("threads="+strconv.Itoa(threads), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			o := DefaultOptions()
			o.Threads = threads
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			for b.Loop() {
				if _, err := Read(bytes.NewReader(data), o, func([]tracecast.Entity) error { return nil }); err != nil {
					b.Fatal(err)
				}
			}
			reportPerLine(b, data, ms)
		})
	}
}

// BenchmarkStatesPjdump is `tracecast states --format pjdump` without the
// file system: resolution, pj_dump's window and text output (written on
// the reading goroutine here).
func BenchmarkStatesPjdump(b *testing.B) {
	data := benchData(b)
	for _, threads := range benchThreads() {
		b.Run("threads="+strconv.Itoa(threads), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			o := DefaultOptions()
			o.PjdumpQuirks = true
			o.Threads = threads
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			for b.Loop() {
				w := pjdump.NewWriter(io.Discard, false)
				if _, err := Read(bytes.NewReader(data), o, w.Write); err != nil {
					b.Fatal(err)
				}
				w.Flush()
			}
			reportPerLine(b, data, ms)
		})
	}
}

// BenchmarkPjdumpWriter measures the pj_dump writer alone on the trace's
// entities (those of `states --format pjdump`, held in memory), in ns an
// entity: the formatting work of the sink's goroutine.
func BenchmarkPjdumpWriter(b *testing.B) {
	data := benchData(b)
	o := DefaultOptions()
	o.PjdumpQuirks = true
	var es []tracecast.Entity
	if _, err := Read(bytes.NewReader(data), o, func(batch []tracecast.Entity) error {
		es = append(es, batch...)
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	w := pjdump.NewWriter(io.Discard, false)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		for i := 0; i < len(es); i += BatchSize {
			if err := w.Write(es[i:min(i+BatchSize, len(es))]); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(es)), "ns/entity")
}

// BenchmarkLiveHeap reports the reader's live heap while it reads the
// trace as `states --format pjdump` does: the largest heap left after a
// collection forced every 200 batches (live-MiB), measured for the memory
// limit of internal/memlimit. It forces collections: its time means
// nothing.
func BenchmarkLiveHeap(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	o := DefaultOptions()
	o.PjdumpQuirks = true
	var peak uint64
	for b.Loop() {
		n := 0
		w := pjdump.NewWriter(io.Discard, false)
		if _, err := Read(bytes.NewReader(data), o, func(es []tracecast.Entity) error {
			if n++; n%200 == 0 {
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				peak = max(peak, ms.HeapAlloc)
			}
			return w.Write(es)
		}); err != nil {
			b.Fatal(err)
		}
	}
	// The input itself is in memory: not the reader's.
	b.ReportMetric(float64(peak-uint64(len(data)))/(1<<20), "live-MiB")
}
