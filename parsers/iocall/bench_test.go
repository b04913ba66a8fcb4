package iocall

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkStrace reports MB/s of strace text (the real fixtures, repeated).
func BenchmarkStrace(b *testing.B) {
	files, _ := filepath.Glob("../../testdata/iocall/*.strace")
	var data []byte
	for _, f := range files {
		d, err := os.ReadFile(f)
		if err != nil {
			b.Fatal(err)
		}
		data = append(data, d...)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := NewParser(Options{Lenient: true})
		for line := range bytes.Lines(data) {
			if _, _, err := p.Line(line, 1); err != nil {
				b.Fatal(err)
			}
		}
	}
}
