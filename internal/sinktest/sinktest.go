// Package sinktest drives the sinks in their tests and benchmarks: sample
// entities of every nature and their rows, batches written through a sink
// and closed, a file sink's commit on Close and its Abort, and the
// benchmarks of a file sink on the entities of the trace
// TRACECAST_BENCH_TRACE names.
package sinktest

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
)

// WriteAll writes each batch through s, then closes it; an error fails
// the test.
func WriteAll[T any](t testing.TB, s tracecast.Sink, batches ...[]T) {
	t.Helper()
	for _, items := range batches {
		if err := s.Write(context.Background(), tracecast.Batch{Items: items}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// WriteThenClose writes the batches through s, in order, until one fails.
// With wantErr, that failure must say it (or the test fails) and it
// returns false; otherwise no write may fail, and it closes s in closeIn
// (the background context when nil) and returns true.
func WriteThenClose(t testing.TB, s tracecast.Sink, batches []any, wantErr string, closeIn context.Context) bool {
	t.Helper()
	var err error
	for _, items := range batches {
		if err = s.Write(context.Background(), tracecast.Batch{Items: items}); err != nil {
			break
		}
	}
	if wantErr != "" {
		if err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Fatalf("err = %v, want %q", err, wantErr)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if closeIn == nil {
		closeIn = context.Background()
	}
	if err := s.Close(closeIn); err != nil {
		t.Fatal(err)
	}
	return true
}

// Open opens a sink writing the file at path.
type Open func(path string) (tracecast.Sink, error)

// benchTrace is TRACECAST_BENCH_TRACE; without it the benchmark is skipped.
func benchTrace(b *testing.B) string {
	path := os.Getenv("TRACECAST_BENCH_TRACE")
	if path == "" {
		b.Skip("TRACECAST_BENCH_TRACE not set")
	}
	return path
}

// readTrace reads the trace at path, handing each batch of its entities
// to fn.
func readTrace(b *testing.B, path string, fn func(es []tracecast.Entity) error) {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	opts := paje.DefaultOptions()
	opts.Name = path
	if _, err := paje.Read(f, opts, fn); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkStates reads TRACECAST_BENCH_TRACE and writes its entities to
// a file of the sink open makes (named trace.EXT) as they come, as
// `states -o FILE` does (reader and sink in one goroutine here).
func BenchmarkStates(b *testing.B, ext string, open Open) {
	path := benchTrace(b)
	out := filepath.Join(b.TempDir(), "trace."+ext)
	for b.Loop() {
		s, err := open(out)
		if err != nil {
			b.Fatal(err)
		}
		readTrace(b, path, func(es []tracecast.Entity) error {
			return s.Write(context.Background(), tracecast.Batch{Items: es})
		})
		if err := s.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWrite writes the entities of TRACECAST_BENCH_TRACE, read
// before, in the batches the states command hands its sink (paje's
// BatchSize each), to a file of the sink open makes: the sink alone,
// without the reader; ns an entity.
func BenchmarkWrite(b *testing.B, ext string, open Open) {
	var batches [][]tracecast.Entity
	n := 0
	readTrace(b, benchTrace(b), func(es []tracecast.Entity) error {
		batches = append(batches, slices.Clone(es))
		n += len(es)
		return nil
	})
	out := filepath.Join(b.TempDir(), "trace."+ext)
	b.ReportAllocs()
	for b.Loop() {
		s, err := open(out)
		if err != nil {
			b.Fatal(err)
		}
		WriteAll(b, s, batches...)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entity")
}
