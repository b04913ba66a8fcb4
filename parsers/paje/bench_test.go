package paje

import (
	"bytes"
	"io"
	"os"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/sinks/pjdump"
)

func benchData(b *testing.B) []byte {
	b.Helper()
	if p := os.Getenv("TRACECAST_BENCH_TRACE"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	return gunzip(b, starpuTrace)
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

// BenchmarkResolve measures the whole reader: lines, header, reorder buffer
// and state resolution into entities.
func BenchmarkResolve(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	o := DefaultOptions()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(data), o, func([]tracecast.Entity) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStatesPjdump is `tracecast states --format pjdump` without the
// file system: resolution, pj_dump's window and text output.
func BenchmarkStatesPjdump(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	o := DefaultOptions()
	o.PjdumpQuirks = true
	o.ReorderHorizon = 0
	for b.Loop() {
		w := pjdump.NewWriter(io.Discard, false)
		if _, err := Read(bytes.NewReader(data), o, w.Write); err != nil {
			b.Fatal(err)
		}
		w.Flush()
	}
}
