package iocall

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracecast/tracecast"
)

// FuzzStrace feeds arbitrary text to the strace parser, in strict and
// lenient mode: it must not panic, and every call has a non-negative
// duration, a known op and Bytes ≤ Req when both are known for reads.
func FuzzStrace(f *testing.F) {
	files, _ := filepath.Glob("../../testdata/iocall/*.strace")
	for _, fn := range files {
		data, _ := os.ReadFile(fn)
		for _, l := range bytes.SplitAfter(data, []byte("\n"))[:40] {
			f.Add(l)
		}
	}
	f.Add([]byte("1 10:00:00.1 read(3</a>, \"x\", 1 <unfinished ...>\n1 10:00:00.2 <... read resumed>) = 1 <0.1>\n"))
	f.Add([]byte("[pid 3] 1.5 pread64(3<socket:[1]>, \"\\\"\", 4, 9) = -1 EIO (x) <0.000001>\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, lenient := range []bool{false, true} {
			_, _ = Read(bytes.NewReader(in), FormatStrace, Options{Lenient: lenient, MaxLineBytes: 4096}, func(c *tracecast.IOCall) error {
				if c.Dur < 0 {
					t.Fatalf("negative duration %+v", c)
				}
				if Kind(c.Op) == "" {
					t.Fatalf("unknown op %+v", c)
				}
				if c.Access != tracecast.AccessNone && !IsData(c.Op) {
					t.Fatalf("access on a non-data call %+v", c)
				}
				return nil
			})
		}
	})
}
