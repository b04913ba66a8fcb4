package iocall

import (
	"bytes"
	"math"
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

// FuzzTable feeds arbitrary text to the CSV and JSON-lines readers, in
// strict and lenient mode: no panic, and every call has a finite time, a
// duration that is a number ≥ 0 and an op; strict mode fails or reads the
// same calls as lenient mode.
func FuzzTable(f *testing.F) {
	f.Add([]byte("time,pid,op,path,fd,offset,requested,bytes,duration,err,flags\n1,7,read,/a,3,0,10,10,0.1,,\n2,7,write,/a,3,0,10,10,0.1,,creat|trunc\n"))
	f.Add([]byte("time,op,dur,rank\n1,read,0.1,3\n2,read\n\"3\",\"write\",\"1e-6\",\"4\"\n"))
	f.Add([]byte(`{"time":1,"op":"read","offset":0,"bytes":5,"duration":0.1}` + "\n" + `{"time":2,"op":"read","offset":5,"bytes":5,"dur":0.1,"rank":2}` + "\n"))
	f.Add([]byte(`{"record":"iocall","time":36000.000001,"pid":7,"op":"openat","path":"/tmp/a&b>c","fd":3,"offset":null,"requested":null,"bytes":null,"duration":0.00001,"err":null,"flags":null}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		for _, format := range []Format{FormatCSV, FormatJSONL} {
			var n [2]int64
			var strictErr error
			for i, lenient := range []bool{false, true} {
				st, err := Read(bytes.NewReader(in), format, Options{Lenient: lenient, MaxLineBytes: 4096, MaxFDs: 4}, func(c *tracecast.IOCall) error {
					if math.IsNaN(c.Time) || math.IsInf(c.Time, 0) || !(c.Dur >= 0) || math.IsInf(c.Dur, 0) || c.Op == "" {
						t.Fatalf("%s: bad call %+v", format, c)
					}
					return nil
				})
				n[i] = st.Calls
				if !lenient {
					strictErr = err
				}
			}
			if strictErr == nil && n[0] != n[1] {
				t.Fatalf("%s: strict read %d calls without error, lenient %d", format, n[0], n[1])
			}
		}
	})
}
