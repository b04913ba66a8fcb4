package iocall

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
)

// straceLog generates an strace log of n processes as it is read: each
// reads a file, leaves an unfinished call or exits, as line does.
type straceLog struct {
	n, pid int
	line   func(pid int) string
	buf    bytes.Buffer
	peak   uint64
}

func (l *straceLog) Read(p []byte) (int, error) {
	for l.buf.Len() < len(p) && l.pid < l.n {
		l.pid++
		l.buf.WriteString(l.line(l.pid))
		if l.pid%20000 == 0 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			l.peak = max(l.peak, ms.HeapAlloc)
		}
	}
	if l.buf.Len() == 0 {
		return 0, io.EOF
	}
	return l.buf.Read(p)
}

func readCount(r io.Reader, opts Options) (int, Stats, error) {
	n := 0
	st, err := Read(r, FormatStrace, opts, func(*tracecast.IOCall) error { n++; return nil })
	return n, st, err
}

// TestStraceForgetsExitedProcesses: a process is forgotten at its exit, so
// a log of 300 000 short-lived processes runs in the memory of a few.
// Before, every pid's descriptor table stayed: 3 M pids took 1.4 GB.
func TestStraceForgetsExitedProcesses(t *testing.T) {
	const n = 300_000
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	log := &straceLog{n: n, line: func(pid int) string {
		return fmt.Sprintf("[pid %d] 10:00:00.%06d read(3</d/in>, \"x\", 4096) = 4096 <0.000010>\n[pid %d] 10:00:00.%06d +++ exited with 0 +++\n", pid, pid%1e6, pid, pid%1e6)
	}}
	calls, st, err := readCount(log, Options{MaxPIDs: 100, MaxFDs: 100})
	if err != nil || calls != n {
		t.Fatalf("%d calls, %v", calls, err)
	}
	if st.Signals != n {
		t.Errorf("%d exits counted", st.Signals)
	}
	if grown := int64(log.peak) - int64(ms.HeapAlloc); grown > 16<<20 {
		t.Errorf("the heap grew by %d MiB", grown>>20)
	}
}

// TestStraceLimits: past max_pids, max_open_calls or max_fds a line is an
// error naming it, or in lenient mode a line skipped under "limit", as the
// Paje reader's limits are.
func TestStraceLimits(t *testing.T) {
	many := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(f(i))
		}
		return b.String()
	}
	tests := []struct {
		name  string
		in    string
		opts  Options
		err   string
		calls int // in lenient mode
	}{
		{"pids", many(5, func(i int) string {
			return fmt.Sprintf("[pid %d] 1.0 read(3</f>, \"x\", 1) = 1 <0.1>\n", i)
		}), Options{MaxPIDs: 3}, "s:4: more than 3 processes (raise --max-pids)", 3},
		{"pids after exits", many(5, func(i int) string {
			return fmt.Sprintf("[pid %d] 1.0 read(3</f>, \"x\", 1) = 1 <0.1>\n[pid %d] +++ killed by SIGKILL +++\n", i, i)
		}), Options{MaxPIDs: 1}, "", 5},
		{"open calls", many(4, func(i int) string {
			return fmt.Sprintf("[pid %d] 1.0 read(3</f>, <unfinished ...>\n", i)
		}) + "[pid 1] 1.1 <... read resumed>\"x\", 1) = 1 <0.1>\n", Options{MaxOpenCalls: 2}, "s:3: more than 2 unfinished calls (raise --max-open-calls)", 1},
		{"fds", many(4, func(i int) string {
			return fmt.Sprintf("1.0 read(%d</f%d>, \"x\", 1) = 1 <0.1>\n", i, i)
		}), Options{MaxFDs: 2}, "s:3: more than 2 open file descriptors (raise --max-fds)", 2},
		{"fds closed", many(4, func(i int) string {
			return fmt.Sprintf("1.0 openat(AT_FDCWD, \"/f%d\", O_RDONLY) = %d <0.1>\n1.0 close(%d) = 0 <0.1>\n", i, i+2, i+2)
		}), Options{MaxFDs: 1}, "", 8},
		{"fork copies fds", "1 1.0 openat(AT_FDCWD, \"/a\", O_RDONLY) = 3 <0.1>\n1 1.0 openat(AT_FDCWD, \"/b\", O_RDONLY) = 4 <0.1>\n" +
			"1 1.0 clone(child_stack=NULL, flags=SIGCHLD) = 2 <0.1>\n2 1.0 read(3, \"x\", 1) = 1 <0.1>\n",
			Options{MaxFDs: 3}, "s:3: more than 3 open file descriptors (raise --max-fds)", 3},
		{"threads share fds", "1 1.0 openat(AT_FDCWD, \"/a\", O_RDONLY) = 3 <0.1>\n1 1.0 openat(AT_FDCWD, \"/b\", O_RDONLY) = 4 <0.1>\n" +
			"1 1.0 clone(child_stack=0x1, flags=CLONE_VM|CLONE_FILES) = 2 <0.1>\n2 1.0 read(3, \"x\", 1) = 1 <0.1>\n" +
			"2 +++ exited with 0 +++\n1 1.0 read(4, \"x\", 1) = 1 <0.1>\n",
			Options{MaxFDs: 2}, "", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.opts.File = "s"
			_, _, err := readCount(strings.NewReader(tt.in), tt.opts)
			if tt.err == "" && err != nil || tt.err != "" && (err == nil || err.Error() != tt.err) {
				t.Fatalf("strict: %v, want %q", err, tt.err)
			}
			tt.opts.Lenient = true
			calls, st, err := readCount(strings.NewReader(tt.in), tt.opts)
			if err != nil || calls != tt.calls {
				t.Fatalf("lenient: %d calls (%v), want %d", calls, err, tt.calls)
			}
			if (tt.err != "") != (st.Skipped["limit"] > 0) {
				t.Errorf("lenient: skipped %v", st.Skipped)
			}
		})
	}
}

// TestTableOpenFiles: in the CSV and JSON-lines formats, max_fds bounds
// the open files whose offsets classify accesses; a close frees one.
func TestTableOpenFiles(t *testing.T) {
	csv := "time,pid,op,path,fd,offset,bytes\n1,1,read,/a,3,0,1\n2,1,read,/b,4,0,1\n3,1,close,/a,3,,\n4,1,read,/c,5,0,1\n5,1,read,/d,6,0,1\n"
	jsonl := `{"time":1,"pid":1,"op":"read","path":"/a","fd":3,"offset":0,"bytes":1}` + "\n" +
		`{"time":2,"pid":1,"op":"read","path":"/b","fd":4,"offset":0,"bytes":1}` + "\n" +
		`{"time":3,"pid":1,"op":"close","path":"/a","fd":3}` + "\n" +
		`{"time":4,"pid":1,"op":"read","path":"/c","fd":5,"offset":0,"bytes":1}` + "\n" +
		`{"time":5,"pid":1,"op":"read","path":"/d","fd":6,"offset":0,"bytes":1}` + "\n"
	for _, c := range []struct {
		format   Format
		in, want string
	}{{FormatCSV, csv, "t:6: more than 2 open files (raise --max-fds)"}, {FormatJSONL, jsonl, "t:5: more than 2 open files (raise --max-fds)"}} {
		_, err := Read(strings.NewReader(c.in), c.format, Options{File: "t", MaxFDs: 2}, func(*tracecast.IOCall) error { return nil })
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.format, err, c.want)
		}
		st, err := Read(strings.NewReader(c.in), c.format, Options{File: "t", MaxFDs: 2, Lenient: true}, func(*tracecast.IOCall) error { return nil })
		if err != nil || st.Skipped["limit"] != 1 || st.Calls != 4 {
			t.Errorf("%s lenient: %v %+v", c.format, err, st)
		}
	}
}

// TestOverflowAndQuotes: a number that does not fit is a bad line naming
// it (before, a 19-digit count or return value wrapped to a negative
// number and a 20-digit time to garbage), and a message quotes at most 100
// bytes of the token.
func TestOverflowAndQuotes(t *testing.T) {
	long := strings.Repeat("x", 5000)
	tests := []struct {
		name   string
		format Format
		in     string
		err    string
	}{
		{"count", FormatStrace, "1.0 read(3</f>, \"x\", 9999999999999999999) = 1 <0.1>\n", `s:1: bad count "9999999999999999999" in read call`},
		{"return", FormatStrace, "1.0 read(3</f>, \"x\", 1) = 9999999999999999999 <0.1>\n", `s:1: bad return value "9999999999999999999" in read call`},
		{"pid", FormatStrace, "[pid 99999999999999999999] 1.0 read(3</f>, \"x\", 1) = 1 <0.1>\n", "s:1: bad pid in [pid N] prefix"},
		{"time", FormatStrace, "99999999999999999999.5 read(3</f>, \"x\", 1) = 1 <0.1>\n", `s:1: bad timestamp "99999999999999999999.5"`},
		{"duration", FormatStrace, "1.0 read(3</f>, \"x\", 1) = 1 <99999999999999999999.5>\n", `s:1: bad duration "<99999999999999999999.5>"`},
		{"long call", FormatStrace, long + "\n", `s:1: not a system call line: "` + strings.Repeat("x", 100) + `…"`},
		{"csv time", FormatCSV, "time,op\n1e301,read\n", "s:2: bad time"},
		{"csv long", FormatCSV, "time,op\n" + long + ",read\n", `s:2: bad time "` + strings.Repeat("x", 100) + `…"`},
		{"json time", FormatJSONL, `{"time":1e400,"op":"read"}` + "\n", "s:1: bad JSON: json: cannot unmarshal number 1e400"},
		{"json long", FormatJSONL, `{"time":1` + strings.Repeat("0", 5000) + `,"op":"read"}` + "\n", "s:1: bad JSON: json: cannot unmarshal number 1000"},
		{"json duration", FormatJSONL, `{"time":1,"op":"read","duration":1e301}` + "\n", "s:1: bad duration"},
	}
	for _, tt := range tests {
		_, err := Read(strings.NewReader(tt.in), tt.format, Options{File: "s"}, func(*tracecast.IOCall) error { return nil })
		if err == nil || !strings.HasPrefix(err.Error(), tt.err) {
			t.Errorf("%s: %.300v, want %s", tt.name, err, tt.err)
			continue
		}
		if len(err.Error()) > 300 {
			t.Errorf("%s: a message of %d bytes", tt.name, len(err.Error()))
		}
		st, err := Read(strings.NewReader(tt.in), tt.format, Options{File: "s", Lenient: true}, func(*tracecast.IOCall) error { return nil })
		if err != nil || st.Skipped.Total() != 1 || st.Calls != 0 {
			t.Errorf("%s lenient: %v %+v", tt.name, err, st)
		}
	}
}

// TestBOM: a UTF-8 byte order mark at the start of a log is skipped, by
// Read and by the pipeline processor, and does not hide the format.
func TestBOM(t *testing.T) {
	csv := "\ufefftime,pid,op,path,fd,offset,bytes\n1,1,read,/a,3,0,1\n"
	strace := "\ufeff1 1.0 read(3</a>, \"x\", 1) = 1 <0.1>\n"
	for _, in := range []string{csv, strace} {
		n := 0
		_, err := Read(strings.NewReader(in), FormatAuto, Options{File: "x.log"}, func(*tracecast.IOCall) error { n++; return nil })
		if err != nil || n != 1 {
			t.Errorf("Read %.20q: %d calls, %v", in, n, err)
		}
		for _, f := range []Format{FormatAuto, Detect("", []byte(strings.TrimPrefix(in, "\ufeff")))} {
			pr, err := NewProcessor(f, Options{File: "x.log"})
			if err != nil {
				t.Fatal(err)
			}
			var calls int
			emit := func(_ context.Context, b tracecast.Batch) error {
				calls += len(b.Items.([]tracecast.IOCall))
				return nil
			}
			var lines []tracecast.Line
			for i, l := range strings.Split(strings.TrimSuffix(in, "\n"), "\n") {
				lines = append(lines, tracecast.Line{Num: int64(i + 1), Data: []byte(l)})
			}
			if err := pr.Process(context.Background(), tracecast.Batch{Items: lines}, emit); err != nil {
				t.Fatalf("processor %s %.20q: %v", f, in, err)
			}
			if err := pr.Flush(context.Background(), emit); err != nil || calls != 1 {
				t.Errorf("processor %s %.20q: %d calls, %v", f, in, calls, err)
			}
		}
	}
}

// TestHeapBound: driven to each of its limits by the lines that cost most
// (many processes, descriptors with long paths, unfinished calls with long
// first halves), the parser's heap stays under HeapBound. Before, a
// descriptor kept its path whole and an unfinished call its half, up to
// MaxLineBytes each: a thousand 100 KB paths or halves took 100 MB.
func TestHeapBound(t *testing.T) {
	long := strings.Repeat("p", 100_000)
	for _, c := range []struct {
		name string
		opts Options
		line func(i int) string
	}{
		{"processes", Options{MaxPIDs: 20_000, MaxFDs: 40_000}, func(i int) string {
			return fmt.Sprintf("[pid %d] 1.0 read(3</d/in>, \"x\", 1) = 1 <0.1>\n", i)
		}},
		{"long paths", Options{MaxPIDs: 10, MaxFDs: 1000}, func(i int) string {
			return fmt.Sprintf("1.0 read(%d</%s%d>, \"x\", 1) = 1 <0.1>\n", i+2, long, i)
		}},
		{"long unfinished calls", Options{MaxPIDs: 2000, MaxOpenCalls: 1000, MaxFDs: 100}, func(i int) string {
			return fmt.Sprintf("[pid %d] 1.0 write(1</dev/null>, \"%s\", 100000 <unfinished ...>\n", i, long)
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.opts.Lenient = true // past a limit, lines are skipped: the heap must stay bounded
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			p := NewParser(c.opts)
			for i := 1; i <= 3000 || i <= 2*c.opts.MaxPIDs; i++ {
				if _, _, err := p.Line([]byte(strings.TrimSuffix(c.line(i), "\n")), int64(i)); err != nil {
					t.Fatal(err)
				}
			}
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			runtime.KeepAlive(p)
			held, bound := int64(after.HeapAlloc)-int64(before.HeapAlloc), c.opts.HeapBound()
			t.Logf("%d KiB held, bound %d KiB", held>>10, bound>>10)
			if held > bound {
				t.Errorf("%d bytes held, over HeapBound %d", held, bound)
			}
		})
	}
}
