package arrow

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
)

// BenchmarkStatesTrace reads TRACECAST_BENCH_TRACE and writes its
// entities to an Arrow file as they come, as `states --format arrow`
// does (reader and sink in one goroutine here).
func BenchmarkStatesTrace(b *testing.B) {
	path := os.Getenv("TRACECAST_BENCH_TRACE")
	if path == "" {
		b.Skip("TRACECAST_BENCH_TRACE not set")
	}
	out := filepath.Join(b.TempDir(), "trace.arrow")
	for b.Loop() {
		f, err := os.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		s, err := New(Options{Path: out})
		if err != nil {
			b.Fatal(err)
		}
		opts := paje.DefaultOptions()
		opts.Name = path
		if _, err := paje.Read(f, opts, func(es []tracecast.Entity) error {
			return s.Write(context.Background(), tracecast.Batch{Items: es})
		}); err != nil {
			b.Fatal(err)
		}
		f.Close()
		if err := s.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteTrace writes the entities of TRACECAST_BENCH_TRACE to an
// Arrow file (the sink alone, without the reader).
func BenchmarkWriteTrace(b *testing.B) {
	path := os.Getenv("TRACECAST_BENCH_TRACE")
	if path == "" {
		b.Skip("TRACECAST_BENCH_TRACE not set")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	var batches [][]tracecast.Entity
	opts := paje.DefaultOptions()
	opts.Name = path
	if _, err := paje.Read(f, opts, func(es []tracecast.Entity) error {
		batches = append(batches, slices.Clone(es))
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	f.Close()
	out := filepath.Join(b.TempDir(), "trace.arrow")
	for b.Loop() {
		s, err := New(Options{Path: out})
		if err != nil {
			b.Fatal(err)
		}
		for _, es := range batches {
			if err := s.Write(context.Background(), tracecast.Batch{Items: es}); err != nil {
				b.Fatal(err)
			}
		}
		if err := s.Close(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
}
