package iocall

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
)

var update = flag.Bool("update", false, "rewrite golden files")

func parseString(t *testing.T, text string, opts Options) ([]tracecast.IOCall, Stats, error) {
	t.Helper()
	var out []tracecast.IOCall
	st, err := Read(strings.NewReader(text), FormatStrace, opts, func(c *tracecast.IOCall) error { out = append(out, *c); return nil })
	return out, st, err
}

func TestLines(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []tracecast.IOCall
	}{
		{"tt -y read", `100 06:07:21.316321 openat(AT_FDCWD</tmp/st>, "/lib/libc.so.6", O_RDONLY|O_CLOEXEC) = 3</usr/lib/libc.so.6> <0.000076>
100 06:07:21.316750 read(3</usr/lib/libc.so.6>, "\177ELF"..., 832) = 832 <0.000074>
100 06:07:21.316944 pread64(3</usr/lib/libc.so.6>, "\6\0"..., 784, 64) = 784 <0.000087>
100 06:07:21.319787 close(3</usr/lib/libc.so.6>) = 0 <0.000074>`,
			[]tracecast.IOCall{
				{Time: 22041.316321, PID: 100, Op: "openat", Path: "/usr/lib/libc.so.6", FD: 3, Offset: -1, Req: -1, Bytes: -1, Dur: 0.000076, Line: 1},
				{Time: 22041.31675, PID: 100, Op: "read", Path: "/usr/lib/libc.so.6", FD: 3, Offset: 0, Req: 832, Bytes: 832, Dur: 0.000074, Access: tracecast.AccessSequential, Line: 2},
				{Time: 22041.316944, PID: 100, Op: "pread64", Path: "/usr/lib/libc.so.6", FD: 3, Offset: 64, Req: 784, Bytes: 784, Dur: 0.000087, Access: tracecast.AccessRandom, Line: 3},
				{Time: 22041.319787, PID: 100, Op: "close", Path: "/usr/lib/libc.so.6", FD: 3, Offset: -1, Req: -1, Bytes: -1, Dur: 0.000074, Line: 4},
			}},
		{"ttt no -y, no pid, lseek, errno", `1795327641.405813 open("/data/f", O_RDWR|O_CREAT, 0644) = 4 <0.000010>
1795327641.405900 lseek(4, 8192, SEEK_SET) = 8192 <0.000001>
1795327641.406000 write(4, "abc", 3) = 3 <0.000002>
1795327641.406100 write(4, "abc", 3) = 3 <0.000002>
1795327641.406200 openat(AT_FDCWD, "/nope", O_RDONLY) = -1 ENOENT (No such file or directory) <0.000003>
1795327641.406300 fsync(4) = 0 <0.001000>`,
			[]tracecast.IOCall{
				{Time: 1795327641.405813, Op: "open", Path: "/data/f", FD: 4, Offset: -1, Req: -1, Bytes: -1, Dur: 0.00001, Flags: tracecast.OpenCreate, Line: 1},
				{Time: 1795327641.4059, Op: "lseek", Path: "/data/f", FD: 4, Offset: 8192, Req: -1, Bytes: -1, Dur: 0.000001, Line: 2},
				{Time: 1795327641.406, Op: "write", Path: "/data/f", FD: 4, Offset: 8192, Req: 3, Bytes: 3, Dur: 0.000002, Access: tracecast.AccessSequential, Line: 3},
				{Time: 1795327641.4061, Op: "write", Path: "/data/f", FD: 4, Offset: 8195, Req: 3, Bytes: 3, Dur: 0.000002, Access: tracecast.AccessSequential, Line: 4},
				{Time: 1795327641.4062, Op: "openat", Path: "/nope", FD: -1, Offset: -1, Req: -1, Bytes: -1, Dur: 0.000003, Err: "ENOENT", Line: 5},
				{Time: 1795327641.4063, Op: "fsync", Path: "/data/f", FD: 4, Offset: -1, Req: -1, Bytes: -1, Dur: 0.001, Line: 6},
			}},
		{"unfinished/resumed across pids, signals, [pid N]", `[pid 7] 10:00:00.000001 openat(AT_FDCWD, "/d/a", O_RDONLY <unfinished ...>
[pid 8] 10:00:00.000002 openat(AT_FDCWD, "/d/b", O_WRONLY|O_APPEND) = 5 <0.000001>
[pid 7] 10:00:00.000003 <... openat resumed>) = 3 <0.000004>
--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=9, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---
[pid 8] 10:00:00.000004 write(5, "x\n", 2 <unfinished ...>
[pid 7] 10:00:00.000005 readv(3, [{iov_base="ab", iov_len=2}, {iov_base="cd", iov_len=4096}], 2) = 4098 <0.000001>
[pid 8] 10:00:00.000006 <... write resumed>) = 2 <0.000003>
+++ exited with 0 +++
[pid 7] 10:00:00.000007 futex(0x1, FUTEX_WAIT, 0, NULL <unfinished ...>
[pid 7] 10:00:00.000008 <... futex resumed>) = 0 <0.0001>`,
			[]tracecast.IOCall{
				{Time: 36000.000002, PID: 8, Op: "openat", Path: "/d/b", FD: 5, Offset: -1, Req: -1, Bytes: -1, Dur: 0.000001, Flags: tracecast.OpenAppend, Line: 2},
				{Time: 36000.000001, PID: 7, Op: "openat", Path: "/d/a", FD: 3, Offset: -1, Req: -1, Bytes: -1, Dur: 0.000004, Line: 3},
				{Time: 36000.000005, PID: 7, Op: "readv", Path: "/d/a", FD: 3, Offset: 0, Req: 4098, Bytes: 4098, Dur: 0.000001, Access: tracecast.AccessSequential, Line: 6},
				{Time: 36000.000004, PID: 8, Op: "write", Path: "/d/b", FD: 5, Offset: -1, Req: 2, Bytes: 2, Dur: 0.000003, Access: tracecast.AccessSequential, Line: 7},
			}},
		{"dup2 and fork share descriptions; sockets dropped", `1 0.5 openat(AT_FDCWD, "/f", O_RDONLY) = 3 <0.1>
1 0.6 dup2(3, 7) = 7 <0.1>
1 0.7 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD) = 2 <0.1>
2 0.8 read(7, "", 10) = 10 <0.1>
1 0.9 read(3, "", 10) = 10 <0.1>
1 1.0 write(4<socket:[1234]>, "x", 1) = 1 <0.1>
1 1.1 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, 3, 0) = 0x7f0000000000 <0.1>
1 1.2 mmap(NULL, 4096, PROT_READ, MAP_PRIVATE|MAP_ANONYMOUS, -1, 0) = 0x7f0000000000 <0.1>`,
			[]tracecast.IOCall{
				{Time: 0.5, PID: 1, Op: "openat", Path: "/f", FD: 3, Offset: -1, Req: -1, Bytes: -1, Dur: 0.1, Line: 1},
				{Time: 0.8, PID: 2, Op: "read", Path: "/f", FD: 7, Offset: 0, Req: 10, Bytes: 10, Dur: 0.1, Access: tracecast.AccessSequential, Line: 4},
				{Time: 0.9, PID: 1, Op: "read", Path: "/f", FD: 3, Offset: 10, Req: 10, Bytes: 10, Dur: 0.1, Access: tracecast.AccessSequential, Line: 5},
				{Time: 1.1, PID: 1, Op: "mmap", Path: "/f", FD: 3, Offset: 0, Req: 4096, Bytes: -1, Dur: 0.1, Line: 7},
			}},
		{"copy_file_range and sendfile", `1 0.1 openat(AT_FDCWD, "/a", O_RDONLY) = 3 <0.1>
1 0.2 openat(AT_FDCWD, "/b", O_WRONLY|O_CREAT|O_TRUNC, 0644) = 4 <0.1>
1 0.3 copy_file_range(3</a>, NULL, 4</b>, NULL, 9223372035781033984, 0) = 3000 <0.1>
1 0.4 sendfile(4</b>, 3</a>, [100] => [200], 100) = 100 <0.1>
1 0.5 write(4</b>, "x", 1) = 1 <0.1>`,
			[]tracecast.IOCall{
				{Time: 0.1, PID: 1, Op: "openat", Path: "/a", FD: 3, Offset: -1, Req: -1, Bytes: -1, Dur: 0.1, Line: 1},
				{Time: 0.2, PID: 1, Op: "openat", Path: "/b", FD: 4, Offset: -1, Req: -1, Bytes: -1, Dur: 0.1, Flags: tracecast.OpenCreate | tracecast.OpenTrunc, Line: 2},
				{Time: 0.3, PID: 1, Op: "copy_file_range", Path: "/a", FD: 3, Offset: 0, Req: 9223372035781033984, Bytes: 3000, Dur: 0.1, Access: tracecast.AccessSequential, Line: 3},
				{Time: 0.4, PID: 1, Op: "sendfile", Path: "/a", FD: 3, Offset: 100, Req: 100, Bytes: 100, Dur: 0.1, Access: tracecast.AccessRandom, Line: 4},
				{Time: 0.5, PID: 1, Op: "write", Path: "/b", FD: 4, Offset: 3100, Req: 1, Bytes: 1, Dur: 0.1, Access: tracecast.AccessSequential, Line: 5},
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := parseString(t, tt.in, Options{File: "x.strace"})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d calls, want %d:\n%+v", len(got), len(tt.want), got)
			}
			for i := range got {
				g, w := got[i], tt.want[i]
				if d := g.Time - w.Time; d > 1e-6 || d < -1e-6 {
					t.Errorf("call %d time %v want %v", i, g.Time, w.Time)
				}
				g.Time, w.Time = 0, 0
				if g != w {
					t.Errorf("call %d:\n got %+v\nwant %+v", i, g, w)
				}
			}
		})
	}
}

func TestBadLines(t *testing.T) {
	bad := []struct{ line, kind string }{
		{"hello world", "not a call"},
		{"1 10:00:00.1 read(3, \"x\", 1) = 1 <abc>", "bad duration"},
		{"1 99:00:00.1 read(3, \"x\", 1) = 1 <0.1>", "bad time"},
		{"1 10:00:00.1 read(3, \"x\", 1 = 1 <0.1>", "bad arguments"},
		{"1 10:00:00.1 read(3, \"x\", 1) <0.1>", "bad return"},
		{"1 10:00:00.1 read(foo, \"x\", 1) = 1 <0.1>", "bad arguments"},
		{"[pid 1 10:00:00.1 read(3, \"x\", 1) = 1", "bad pid"},
		// no -T, or the line cut in the duration: the time in the call is
		// unknown, not 0
		{"1 10:00:00.1 read(3, \"x\", 1) = 1", "bad duration"},
		{"1 10:00:00.1 read(3, \"x\", 1) = 1 <0.0001", "bad duration"},
		{"1 10:00:00.1 read(3</tmp/a>, \"x\", 1) = -1 EIO (Input/output error)", "bad duration"},
		{"1 10:00:00.1 openat(AT_FDCWD, \"/a\", O_RDONLY) = 3</a>", "bad duration"},
	}
	for _, b := range bad {
		in := "1 10:00:00.0 close(9) = 0 <0.1>\n" + b.line + "\n"
		_, _, err := parseString(t, in, Options{File: "t.strace"})
		var e *Error
		if !errors.As(err, &e) || e.Line != 2 || e.Kind != b.kind || !strings.HasPrefix(err.Error(), "t.strace:2: ") {
			t.Errorf("%q: got %v (%+v), want t.strace:2 %s", b.line, err, e, b.kind)
		}
		calls, st, err := parseString(t, in, Options{File: "t.strace", Lenient: true})
		if err != nil || len(calls) != 1 || st.Skipped[b.kind] != 1 {
			t.Errorf("lenient %q: %v %d calls %v", b.line, err, len(calls), st.Skipped)
		}
	}
	long := "1 10:00:00.0 write(3, \"" + strings.Repeat("a", 300) + "\", 300) = 300 <0.1>\nok\n"
	_, _, err := parseString(t, long, Options{File: "l", MaxLineBytes: 100})
	if err == nil || !strings.Contains(err.Error(), "l:1: line longer") {
		t.Errorf("long line: %v", err)
	}
	_, st, _ := parseString(t, long, Options{File: "l", MaxLineBytes: 100, Lenient: true})
	if st.Skipped["line too long"] != 1 || st.Skipped["not a call"] != 1 {
		t.Errorf("lenient long line: %v", st.Skipped)
	}
}

func TestMidnight(t *testing.T) {
	got, _, err := parseString(t, "1 23:59:59.900000 close(3) = 0 <0.000001>\n1 00:00:00.100000 close(4) = 0 <0.000001>\n", Options{})
	if err != nil || len(got) != 2 || got[1].Time-got[0].Time < 0.19 || got[1].Time-got[0].Time > 0.21 {
		t.Fatalf("%v %+v", err, got)
	}
}

// TestFixtures parses the real strace logs in testdata/iocall and compares
// a summary with golden files (go test -update rewrites them).
func TestFixtures(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/iocall/*.strace")
	if len(files) == 0 {
		t.Fatal("no fixtures")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			calls, st, err := ReadFile(f, "", Options{})
			if err != nil {
				t.Fatal(err)
			}
			if st.Skipped.Total() != 0 || len(calls) == 0 {
				t.Fatalf("stats %+v", st)
			}
			var b bytes.Buffer
			fmt.Fprintf(&b, "lines %d calls %d other %d signals %d unmatched %d\n", st.Lines, st.Calls, st.Other, st.Signals, st.Unmatched)
			for _, c := range calls {
				if c.Dur < 0 {
					t.Errorf("negative duration %+v", c)
				}
				fmt.Fprintf(&b, "%d %s %s fd=%d off=%d req=%d n=%d %s %s\n", c.Line, c.Op, c.Path, c.FD, c.Offset, c.Req, c.Bytes, c.Access, c.Err)
			}
			golden := strings.TrimSuffix(f, ".strace") + ".golden"
			if *update {
				if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update)", err)
			}
			if !bytes.Equal(want, b.Bytes()) {
				t.Errorf("%s differs from %s (go test -update rewrites it):\n%s", f, golden, b.String())
			}
		})
	}
}

// ddCalls reads the dd_tt_y.strace fixture: its calls, and them as the
// CSV (header first) and the JSON lines Writer writes.
func ddCalls(t *testing.T) (calls []tracecast.IOCall, csvb, jb *bytes.Buffer) {
	t.Helper()
	calls, _, err := ReadFile("../../testdata/iocall/dd_tt_y.strace", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	csvb, jb = &bytes.Buffer{}, &bytes.Buffer{}
	csvb.WriteString(strings.Join(CSVHeader, ",") + "\n")
	for i := range calls {
		csvb.WriteString(strings.Join(CSVRecord(&calls[i]), ",") + "\n")
		jb.Write(append(calls[i].AppendJSON(nil), '\n'))
	}
	return calls, csvb, jb
}

func TestCSVJSONRoundTrip(t *testing.T) {
	calls, csvb, jb := ddCalls(t)
	// Writer writes the same bytes: CSV rows, tracecast.iocall/1 records.
	for _, tc := range []struct {
		f    Format
		want []byte
	}{{FormatCSV, csvb.Bytes()}, {FormatJSONL, jb.Bytes()}} {
		var b bytes.Buffer
		w, err := NewWriter(&b, tc.f)
		if err != nil {
			t.Fatal(err)
		}
		for i := range calls {
			if err := w.Write(&calls[i]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil || !bytes.Equal(b.Bytes(), tc.want) {
			t.Errorf("Writer %s: %v\n%s\nwant\n%s", tc.f, err, b.Bytes(), tc.want)
		}
	}
	if _, err := NewWriter(io.Discard, FormatStrace); err == nil {
		t.Error("Writer of strace: no error")
	}
	for _, in := range []struct {
		name string
		data []byte
	}{{"x.csv", csvb.Bytes()}, {"x.jsonl", jb.Bytes()}} {
		var got []tracecast.IOCall
		_, err := Read(bytes.NewReader(in.data), "", Options{File: in.name}, func(c *tracecast.IOCall) error { got = append(got, *c); return nil })
		if err != nil {
			t.Fatal(in.name, err)
		}
		if len(got) != len(calls) {
			t.Fatalf("%s: %d calls want %d", in.name, len(got), len(calls))
		}
		for i := range got {
			g, w := got[i], calls[i]
			g.Line, w.Line = 0, 0
			if g != w {
				t.Errorf("%s call %d:\n got %+v\nwant %+v", in.name, i, g, w)
				break
			}
		}
	}
	if f, ok := ParseOpenFlags("O_WRONLY|O_CREAT|O_TRUNC|O_CLOEXEC"); !ok || f != tracecast.OpenCreate|tracecast.OpenTrunc || f.String() != "creat|trunc" {
		t.Errorf("flags %v %v", f, ok)
	}
	// rank and dur aliases, bad values
	_, err := Read(strings.NewReader("time,rank,op,bytes,dur\n1.5,3,write,10,0.1\n1.6,3,write,x,0.1\n"), "", Options{File: "a.csv"}, func(*tracecast.IOCall) error { return nil })
	if err == nil || !strings.HasPrefix(err.Error(), "a.csv:3: bad bytes") {
		t.Errorf("csv bad value: %v", err)
	}
	var got []tracecast.IOCall
	_, err = Read(strings.NewReader(`{"time":1,"rank":2,"op":"read","bytes":5,"offset":0,"dur":0.5}`+"\n"+`{"time":2,"op":"read","duration":-1}`+"\n"), "", Options{File: "a.jsonl", Lenient: true}, func(c *tracecast.IOCall) error { got = append(got, *c); return nil })
	if err != nil || len(got) != 1 || got[0].PID != 2 || got[0].Dur != 0.5 || got[0].Req != 5 {
		t.Errorf("jsonl: %v %+v", err, got)
	}
}

func TestProcessor(t *testing.T) {
	data, err := os.ReadFile("../../testdata/iocall/pid_bracket.strace")
	if err != nil {
		t.Fatal(err)
	}
	var lines []tracecast.Line
	for i, l := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		lines = append(lines, tracecast.Line{Data: l, Num: int64(i + 1)})
	}
	want, _, err := ReadFile("../../testdata/iocall/pid_bracket.strace", "", Options{})
	if err != nil {
		t.Fatal(err)
	}
	pr, err := NewProcessor(FormatStrace, Options{File: "pid_bracket.strace"})
	if err != nil {
		t.Fatal(err)
	}
	var got []tracecast.IOCall
	emit := func(_ context.Context, b tracecast.Batch) error {
		got = append(got, b.Items.([]tracecast.IOCall)...)
		return nil
	}
	ctx := context.Background()
	// two input batches, split in the middle of unfinished/resumed pairs
	mid := len(lines) / 2
	for _, part := range [][]tracecast.Line{lines[:mid], lines[mid:]} {
		if err := pr.Process(ctx, tracecast.Batch{Stream: "s", Items: part}, emit); err != nil {
			t.Fatal(err)
		}
	}
	if err := pr.Flush(ctx, emit); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d calls via the processor, %d via Read", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("call %d: %+v vs %+v", i, got[i], want[i])
		}
	}
	if _, err := NewProcessor("xml", Options{}); err == nil {
		t.Fatal("unknown format accepted")
	}
	if err := pr.Process(ctx, tracecast.Batch{Items: []int{1}}, emit); err == nil {
		t.Fatal("wrong batch type accepted")
	}
}

// splitLines cuts text into the lines a file source would hand over.
func splitLines(data []byte) []tracecast.Line {
	var lines []tracecast.Line
	for i, l := range bytes.Split(bytes.TrimRight(data, "\n"), []byte("\n")) {
		lines = append(lines, tracecast.Line{Data: l, Num: int64(i + 1)})
	}
	return lines
}

// process runs lines through a processor, returning the calls and the
// error of Process or Flush.
func process(pr tracecast.Processor, lines []tracecast.Line) ([]tracecast.IOCall, error) {
	var got []tracecast.IOCall
	emit := func(_ context.Context, b tracecast.Batch) error {
		got = append(got, b.Items.([]tracecast.IOCall)...)
		return nil
	}
	ctx := context.Background()
	if len(lines) > 0 {
		if err := pr.Process(ctx, tracecast.Batch{Stream: "s", Items: lines}, emit); err != nil {
			return got, err
		}
	}
	return got, pr.Flush(ctx, emit)
}

// TestProcessorDetects: with FormatAuto the processor reads each format as
// Read does, from the stream's name or its first line.
func TestProcessorDetects(t *testing.T) {
	strace, err := os.ReadFile("../../testdata/iocall/dd_tt_y.strace")
	if err != nil {
		t.Fatal(err)
	}
	want, csvb, jb := ddCalls(t)
	for _, in := range []struct {
		name string
		data []byte
	}{{"app.strace", strace}, {"stdin", strace}, {"calls.csv", csvb.Bytes()}, {"stdin", csvb.Bytes()},
		{"calls.ndjson", jb.Bytes()}, {"stdin", jb.Bytes()}} {
		pr, err := NewProcessor(FormatAuto, Options{File: in.name})
		if err != nil {
			t.Fatal(err)
		}
		got, err := process(pr, splitLines(in.data))
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s (%.10q...): %v, %d calls, want %d", in.name, in.data, err, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			g.Line, w.Line = 0, 0
			if g != w {
				t.Fatalf("%s call %d:\n got %+v\nwant %+v", in.name, i, g, w)
			}
		}
	}
	pr, _ := NewProcessor(FormatAuto, Options{File: "empty.csv"})
	if got, err := process(pr, nil); err != nil || len(got) != 0 {
		t.Fatalf("empty input: %v %v", got, err)
	}
}

// TestProcessorBadLines: lines too long and bad lines as in Read; the
// calls before a bad line are handed over; the counts are logged at the end.
func TestProcessorBadLines(t *testing.T) {
	long := []byte("1 10:00:00.0 close(3) = 0 <0.1>\n1 10:00:00.0 write(3, \"" + strings.Repeat("a", 300) + "\", 300) = 300 <0.1>\nok\n")
	pr, _ := NewProcessor(FormatStrace, Options{File: "l", MaxLineBytes: 100})
	got, err := process(pr, splitLines(long))
	if err == nil || err.Error() != "l:2: line longer than 100 bytes" || len(got) != 1 {
		t.Fatalf("strict: %v, %d calls", err, len(got))
	}
	var logs bytes.Buffer
	pr, _ = NewProcessor(FormatStrace, Options{File: "l", MaxLineBytes: 100, Lenient: true, Logger: zerolog.New(&logs)})
	if got, err := process(pr, splitLines(long)); err != nil || len(got) != 1 {
		t.Fatalf("lenient: %v, %d calls", err, len(got))
	}
	var warn struct {
		Level, File, Message string
		Skipped              int64
		Reasons              map[string]int64
	}
	if err := json.Unmarshal(bytes.SplitN(logs.Bytes(), []byte("\n"), 2)[0], &warn); err != nil {
		t.Fatalf("%v: %s", err, logs.String())
	}
	if warn.Level != "warn" || warn.File != "l" || warn.Message != "skipped bad lines" || warn.Skipped != 2 ||
		warn.Reasons["line too long"] != 1 || warn.Reasons["not a call"] != 1 {
		t.Fatalf("log: %s", logs.String())
	}
	if !strings.Contains(logs.String(), `"message":"read I/O calls"`) {
		t.Fatalf("no debug summary: %s", logs.String())
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"": FormatStrace, "strace": FormatStrace, "csv": FormatCSV, "jsonl": FormatJSONL, "auto": FormatAuto} {
		if f, err := ParseFormat(in); err != nil || f != want {
			t.Errorf("%q: %q %v", in, f, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("xml accepted")
	}
}

// TestRecordsReadBack: the JSON records a pipeline writes for I/O calls
// (tracecast.IOCall.AppendJSON: "record" first, null for what is unknown)
// are JSON-lines input this parser reads back as the same calls.
func TestRecordsReadBack(t *testing.T) {
	for _, fixture := range []string{"dd_tt_y.strace", "cp_tt_y.strace", "sh_fork.strace"} {
		calls, _, err := ReadFile("../../testdata/iocall/"+fixture, "", Options{})
		if err != nil {
			t.Fatal(err)
		}
		var jb []byte
		for i := range calls {
			jb = append(calls[i].AppendJSON(jb), '\n')
		}
		var got []tracecast.IOCall
		_, err = Read(bytes.NewReader(jb), "", Options{File: "records.jsonl"}, func(c *tracecast.IOCall) error { got = append(got, *c); return nil })
		if err != nil {
			t.Fatal(fixture, err)
		}
		if len(got) != len(calls) {
			t.Fatalf("%s: %d calls want %d", fixture, len(got), len(calls))
		}
		for i := range got {
			g, w := got[i], calls[i]
			g.Line, w.Line = 0, 0
			if g != w {
				t.Errorf("%s call %d:\n got %+v\nwant %+v", fixture, i, g, w)
				break
			}
		}
	}
}

// ReadFile reads a gzip-compressed log as the plain one.
func TestReadFileGzip(t *testing.T) {
	plain := "../../testdata/iocall/dd_tt_y.strace"
	data, err := os.ReadFile(plain)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	zipped := filepath.Join(t.TempDir(), "dd.strace.gz")
	os.WriteFile(zipped, b.Bytes(), 0o644)
	want, _, err1 := ReadFile(plain, FormatStrace, Options{File: "x"})
	got, _, err2 := ReadFile(zipped, FormatStrace, Options{File: "x"})
	if err1 != nil || err2 != nil || len(got) == 0 || !reflect.DeepEqual(got, want) {
		t.Errorf("%d calls (%v), want %d (%v)", len(got), err2, len(want), err1)
	}
}

// TestTableBadInput: CSV rows whose fields cannot be matched with the
// header's names, a header naming a column twice, and JSON calls without a
// time are bad lines naming the file and line, not calls with guessed
// fields (a time of 0, a duration of 0).
func TestTableBadInput(t *testing.T) {
	tests := []struct {
		name   string
		format Format
		in     string
		err    string
	}{
		{"short row", FormatCSV, "time,op,duration\n1,read,0.1\n2,read\n", `s:3: bad CSV: 2 fields, the header has 3`},
		{"long row", FormatCSV, "time,op,duration\n1,read,0.1,7\n", `s:2: bad CSV: 4 fields, the header has 3`},
		{"two time columns", FormatCSV, "time,op,duration,time\n1,read,0.1,2\n", `s:1: CSV header has two "time" columns`},
		{"pid and rank", FormatCSV, "time,op,pid,rank\n1,read,5,6\n", `s:1: CSV header has two "pid" columns`},
		{"json no time", FormatJSONL, `{"op":"read","duration":0.1}` + "\n", "s:1: no time"},
		{"json null time", FormatJSONL, `{"time":null,"op":"read","duration":0.1}` + "\n", "s:1: no time"},
	}
	for _, tt := range tests {
		_, err := Read(strings.NewReader(tt.in), tt.format, Options{File: "s"}, func(*tracecast.IOCall) error { return nil })
		if err == nil || err.Error() != tt.err {
			t.Errorf("%s: %v, want %s", tt.name, err, tt.err)
		}
	}
	st, err := Read(strings.NewReader("time,op,duration\n1,read,0.1\n2,read\n3,write,0.2\n"), FormatCSV, Options{File: "s", Lenient: true},
		func(*tracecast.IOCall) error { return nil })
	if err != nil || st.Calls != 2 || st.Skipped["bad csv"] != 1 {
		t.Errorf("lenient short row: %v %+v", err, st)
	}
}
