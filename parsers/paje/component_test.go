package paje

import (
	"context"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"
	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/pipelines/component"
)

// TestParserConfigThreads: threads defaults to all cores, must be
// positive, and does not change what the parser emits.
func TestParserConfigThreads(t *testing.T) {
	if got := DefaultParserConfig().Threads; got != runtime.GOMAXPROCS(0) {
		t.Errorf("default threads %d, want GOMAXPROCS %d", got, runtime.GOMAXPROCS(0))
	}
	for _, c := range []struct {
		threads int
		err     string
	}{{1, ""}, {4, ""}, {1024, ""}, {0, "threads: must be positive (got 0)"}, {-2, "threads: must be positive (got -2)"},
		{1025, "threads: 1025 is more than 1024"}, {100000, "threads: 100000 is more than 1024"}} {
		o := DefaultParserConfig()
		o.Threads = c.threads
		err := o.Validate()
		if (err == nil) != (c.err == "") || err != nil && !strings.Contains(err.Error(), c.err) {
			t.Errorf("threads %d: %v, want %q", c.threads, err, c.err)
		}
	}
	data := gziptest.ReadFile(t, starpuTrace)
	var outs [][]tracecast.Entity
	for _, threads := range []int{1, 3} {
		o := DefaultParserConfig()
		o.Threads = threads
		p, err := newParser(component.Env{Stream: "starpu", Logger: zerolog.Nop()}, o)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Chunks {
			t.Fatal("the parser does not take chunks: a file source would hand it lines one by one")
		}
		var got []tracecast.Entity
		emit := func(_ context.Context, b tracecast.Batch) error {
			got = append(got, b.Items.([]tracecast.Entity)...)
			return nil
		}
		var lines []tracecast.Line
		for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
			lines = append(lines, tracecast.Line{Data: []byte(l), Num: int64(i + 1)})
		}
		for i := 0; i < len(lines); i += 1024 {
			if err := p.Process(context.Background(), tracecast.Batch{Stream: "starpu", Items: lines[i:min(i+1024, len(lines))]}, emit); err != nil {
				t.Fatal(err)
			}
		}
		if err := p.Flush(context.Background(), emit); err != nil {
			t.Fatal(err)
		}
		outs = append(outs, got)
	}
	if len(outs[0]) == 0 || len(outs[0]) != len(outs[1]) {
		t.Fatalf("%d and %d entities", len(outs[0]), len(outs[1]))
	}
	for i := range outs[0] {
		if !sameEntity(&outs[0][i], &outs[1][i]) {
			t.Fatalf("entity %d: %+v, with 3 threads %+v", i, outs[0][i], outs[1][i])
		}
	}
}

// TestOpenStreamCost: many traces open at once (a Kafka topic) cost little
// each: the parsers of one stage share their string table and output
// buffer, which were most of an open trace's memory (200 KiB of 260 on this
// StarPU trace), and
// sharing changes no entity.
func TestOpenStreamCost(t *testing.T) {
	data := gziptest.ReadFile(t, starpuTrace)
	var lines []tracecast.Line
	for i, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		lines = append(lines, tracecast.Line{Data: []byte(l), Num: int64(i + 1)})
	}
	lines = lines[:min(len(lines), 3000)] // the header and the first events: every trace open
	run := func(streams int) ([][]tracecast.Entity, *component.Parser) {
		p, err := newParser(component.Env{Logger: zerolog.Nop()}, DefaultParserConfig())
		if err != nil {
			t.Fatal(err)
		}
		out := make([][]tracecast.Entity, streams)
		for i := 0; i < len(lines); i += 500 {
			for s := range streams {
				emit := func(_ context.Context, b tracecast.Batch) error {
					if s < 2 {
						out[s] = append(out[s], b.Items.([]tracecast.Entity)...)
					}
					return nil
				}
				b := tracecast.Batch{Stream: strconv.Itoa(s), Items: lines[i:min(i+500, len(lines))]}
				if err := p.Process(context.Background(), b, emit); err != nil {
					t.Fatal(err)
				}
			}
		}
		return out, p
	}
	one, _ := run(1)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 300
	many, p := run(n)
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapAlloc) - int64(before.HeapAlloc)) / n
	t.Logf("%d open traces: %d KiB each", n, per>>10)
	if per > OpenStreamBytes {
		t.Errorf("%d bytes per open trace, want at most %d", per, OpenStreamBytes)
	}
	runtime.KeepAlive(p)
	for s := range 2 {
		if len(many[s]) != len(one[0]) {
			t.Fatalf("stream %d: %d entities, alone %d", s, len(many[s]), len(one[0]))
		}
		for i := range one[0] {
			if !sameEntity(&many[s][i], &one[0][i]) {
				t.Fatalf("stream %d entity %d: %+v, alone %+v", s, i, many[s][i], one[0][i])
			}
		}
	}
}
