package arrow

import (
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/sinktest"
)

func openFile(path string) (tracecast.Sink, error) { return New(Options{Path: path}) }

// BenchmarkStatesTrace reads TRACECAST_BENCH_TRACE and writes its
// entities to an Arrow file as they come, as `states --format arrow`
// does (reader and sink in one goroutine here).
func BenchmarkStatesTrace(b *testing.B) { sinktest.BenchmarkStates(b, "arrow", openFile) }

// BenchmarkWriteTrace writes the entities of TRACECAST_BENCH_TRACE to an
// Arrow file (the sink alone, without the reader).
func BenchmarkWriteTrace(b *testing.B) { sinktest.BenchmarkWrite(b, "arrow", openFile) }
