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
	f.Add([]byte("1 1.0 openat(AT_FDCWD, \"/a\", O_RDONLY) = 3 <0.1>\n1 1.0 clone(child_stack=0x1, flags=CLONE_VM|CLONE_FILES) = 2 <0.1>\n" +
		"1 1.0 clone(child_stack=NULL, flags=SIGCHLD) = 4 <0.1>\n2 1.0 dup(3) = 5 <0.1>\n4 1.0 close(3) = 0 <0.1>\n2 +++ exited with 0 +++\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		// The limits hold, and the descriptor count is right, after every
		// line.
		for _, lenient := range []bool{false, true} {
			p := NewParser(Options{Lenient: lenient, MaxPIDs: 3, MaxOpenCalls: 2, MaxFDs: 4})
			for i, line := range bytes.Split(in, []byte("\n")) {
				if _, _, err := p.Line(line, int64(i+1)); err != nil {
					break
				}
				n, seen := 0, map[*fdTable]bool{}
				for _, tb := range p.tables {
					if !seen[tb] {
						seen[tb] = true
						n += len(tb.fds)
					}
				}
				if n != p.nfds || len(p.tables) > 3 || len(p.pending) > 2 || p.nfds > 4 {
					t.Fatalf("line %d: %d fds counted, %d tracked, %d pids, %d pending", i+1, p.nfds, n, len(p.tables), len(p.pending))
				}
			}
		}
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
