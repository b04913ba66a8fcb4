package parquet

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/parsers/paje"
)

// traceBatches reads TRACECAST_BENCH_TRACE into batches of entities, as
// the states command hands them to its sink (paje.BatchSize each).
func traceBatches(b *testing.B) [][]tracecast.Entity {
	path := os.Getenv("TRACECAST_BENCH_TRACE")
	if path == "" {
		b.Skip("TRACECAST_BENCH_TRACE not set")
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out [][]tracecast.Entity
	opts := paje.DefaultOptions()
	opts.Name = path
	if _, err := paje.Read(f, opts, func(es []tracecast.Entity) error {
		out = append(out, slices.Clone(es))
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkWriteTrace writes the entities of TRACECAST_BENCH_TRACE to a
// Parquet file (the sink alone, without the reader): ns an entity.
func BenchmarkWriteTrace(b *testing.B) {
	batches := traceBatches(b)
	n := 0
	for _, es := range batches {
		n += len(es)
	}
	path := filepath.Join(b.TempDir(), "trace.parquet")
	b.ReportAllocs()
	for b.Loop() {
		s, err := New(Options{Path: path})
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
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/entity")
}

// BenchmarkStatesTrace reads TRACECAST_BENCH_TRACE and writes its
// entities to a Parquet file as they come, as `states --format parquet`
// does (reader and sink in one goroutine here).
func BenchmarkStatesTrace(b *testing.B) {
	path := os.Getenv("TRACECAST_BENCH_TRACE")
	if path == "" {
		b.Skip("TRACECAST_BENCH_TRACE not set")
	}
	out := filepath.Join(b.TempDir(), "trace.parquet")
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
