package parquet

import (
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/sinktest"
)

func openFile(path string) (tracecast.Sink, error) { return New(Options{Path: path}) }

// BenchmarkWriteTrace writes the entities of TRACECAST_BENCH_TRACE to a
// Parquet file (the sink alone, without the reader): ns an entity.
func BenchmarkWriteTrace(b *testing.B) { sinktest.BenchmarkWrite(b, "parquet", openFile) }

// BenchmarkStatesTrace reads TRACECAST_BENCH_TRACE and writes its
// entities to a Parquet file as they come, as `states --format parquet`
// does (reader and sink in one goroutine here).
func BenchmarkStatesTrace(b *testing.B) { sinktest.BenchmarkStates(b, "parquet", openFile) }
