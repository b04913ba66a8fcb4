package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/klauspost/compress/gzip"
	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
)

// collect runs src and returns every emitted batch. Chunks (Options.Chunks)
// are cut into the lines the line loop would emit, then released.
func collect(t *testing.T, src *Source) ([][]tracecast.Line, error) {
	t.Helper()
	var got [][]tracecast.Line
	var num, end int64
	err := src.Run(t.Context(), func(ctx context.Context, b tracecast.Batch) error {
		lines, ok := b.Items.([]tracecast.Line)
		if cs, isChunks := b.Items.([]tracecast.Chunk); isChunks && src.opts.Chunks {
			lines, ok = chunkLines(t, cs, &num, &end), true
		}
		if !ok {
			t.Fatalf("batch items are %T, want []tracecast.Line", b.Items)
		}
		if b.Stream != src.Name() {
			t.Errorf("batch stream %q, want %q", b.Stream, src.Name())
		}
		got = append(got, lines)
		return nil
	})
	return got, err
}

// chunkLines cuts chunks into lines (copied), numbered from *num, and
// releases them.
func chunkLines(t *testing.T, cs []tracecast.Chunk, num, end *int64) []tracecast.Line {
	var lines []tracecast.Line
	for _, c := range cs {
		if c.Release == nil || len(c.Data) == 0 {
			t.Fatalf("chunk %q: empty or without Release", c.Data)
		}
		if c.First != (*num == 0) {
			t.Errorf("chunk at line %d: First = %v", *num+1, c.First)
		}
		n := int64(0)
		for data := c.Data; len(data) > 0; n++ {
			line, rest, nl := bytes.Cut(data, []byte{'\n'})
			*num++
			*end += int64(len(data) - len(rest))
			line = bytes.TrimSuffix(line, []byte{'\r'})
			lines = append(lines, tracecast.Line{Data: bytes.Clone(line), Num: *num, End: *end, Partial: !nl})
			data = rest
		}
		if n != c.Lines {
			t.Errorf("chunk of %d lines says %d", n, c.Lines)
		}
		c.Release()
	}
	return lines
}

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func gzipped(t *testing.T, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

type wantLine struct {
	data     string
	num, end int64
}

func flatten(batches [][]tracecast.Line) []wantLine {
	var out []wantLine
	for _, b := range batches {
		for _, l := range b {
			out = append(out, wantLine{string(l.Data), l.Num, l.End})
		}
	}
	return out
}

func TestSourceLines(t *testing.T) {
	tests := []struct {
		name      string
		input     string
		gzip      bool
		strict    bool
		maxLine   int
		want      []wantLine
		truncated bool
		wantErr   string
	}{
		{
			name:  "plain",
			input: "a\nbb\n\nccc\n",
			want:  []wantLine{{"a", 1, 2}, {"bb", 2, 5}, {"", 3, 6}, {"ccc", 4, 10}},
		},
		{
			name:  "crlf",
			input: "a\r\nb\r\n",
			want:  []wantLine{{"a", 1, 3}, {"b", 2, 6}},
		},
		{
			name:  "inner carriage return kept",
			input: "a\rb\n",
			want:  []wantLine{{"a\rb", 1, 4}},
		},
		{
			name:  "gzip",
			input: "x 1\ny 2\n",
			gzip:  true,
			want:  []wantLine{{"x 1", 1, 4}, {"y 2", 2, 8}},
		},
		{
			name:      "missing final newline is emitted and flagged",
			input:     "a\nlast",
			want:      []wantLine{{"a", 1, 2}, {"last", 2, 6}},
			truncated: true,
		},
		{
			name:      "missing final newline in gzip",
			input:     "a\nlast\r",
			gzip:      true,
			want:      []wantLine{{"a", 1, 2}, {"last", 2, 7}},
			truncated: true,
		},
		{
			name:    "strict EOL",
			input:   "a\nlast",
			strict:  true,
			wantErr: "IN:2: truncated last line (no newline at end of file)",
		},
		{
			name:   "strict EOL accepts a final newline",
			input:  "a\n",
			strict: true,
			want:   []wantLine{{"a", 1, 2}},
		},
		{
			name:    "long line",
			input:   "ok\n" + strings.Repeat("x", 11) + "\n",
			maxLine: 10,
			wantErr: "IN:2: line longer than 10 bytes",
		},
		{
			name:    "line at the limit",
			input:   strings.Repeat("x", 10) + "\r\n",
			maxLine: 10,
			want:    []wantLine{{strings.Repeat("x", 10), 1, 12}},
		},
		{
			name:    "long line beyond the read buffer",
			input:   "ok\n" + strings.Repeat("y", 3*readBufferSize) + "\n",
			maxLine: readBufferSize,
			wantErr: "IN:2: line longer than 65536 bytes",
		},
		{
			name:    "long line within the limit beyond the read buffer",
			input:   strings.Repeat("z", 2*readBufferSize+5) + "\n",
			maxLine: 3 * readBufferSize,
			want:    []wantLine{{strings.Repeat("z", 2*readBufferSize+5), 1, 2*readBufferSize + 6}},
		},
		{
			name:  "empty file",
			input: "",
		},
		{
			name:  "one byte file",
			input: "\x1f",
			want:  []wantLine{{"\x1f", 1, 1}},
			// Too short for gzip magic; read as plain text.
			truncated: true,
		},
	}
	for _, tt := range tests {
		for _, chunks := range []bool{false, true} {
			name := tt.name
			if chunks {
				name += " in chunks"
			}
			t.Run(name, func(t *testing.T) {
				data := []byte(tt.input)
				if tt.gzip {
					data = gzipped(t, data)
				}
				path := writeFile(t, "in.trace", data)
				var logs bytes.Buffer
				src, err := New(Options{Path: path, Name: "IN", StrictEOL: tt.strict, MaxLineBytes: tt.maxLine,
					Logger: zerolog.New(&logs), Chunks: chunks})
				if err != nil {
					t.Fatal(err)
				}
				batches, err := collect(t, src)
				if tt.wantErr != "" {
					if err == nil || err.Error() != tt.wantErr {
						t.Fatalf("err = %v, want %q", err, tt.wantErr)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(batches) == 0 {
					t.Fatal("no batch: every input, an empty one too, is a stream downstream")
				}
				got := flatten(batches)
				for i, b := range batches {
					for j, l := range b {
						if last := i == len(batches)-1 && j == len(b)-1; l.Partial != (last && tt.truncated) {
							t.Errorf("line %d: Partial = %v, want %v", l.Num, l.Partial, last && tt.truncated)
						}
					}
				}
				if fmt.Sprint(got) != fmt.Sprint(tt.want) {
					t.Errorf("lines =\n%+v\nwant\n%+v", got, tt.want)
				}
				st := src.Stats()
				if st.Truncated != tt.truncated {
					t.Errorf("Truncated = %v, want %v", st.Truncated, tt.truncated)
				}
				if hasWarn := strings.Contains(logs.String(), `"level":"warn"`); hasWarn != tt.truncated {
					t.Errorf("warning logged = %v, want %v (logs %s)", hasWarn, tt.truncated, logs.String())
				}
				if st.Gzip != tt.gzip {
					t.Errorf("Gzip = %v, want %v", st.Gzip, tt.gzip)
				}
				if st.Bytes != int64(len(tt.input)) {
					t.Errorf("Bytes = %d, want %d", st.Bytes, len(tt.input))
				}
				p := src.Progress()
				if p.Read != int64(len(data)) || p.Total != int64(len(data)) || p.Lines != int64(len(tt.want)) {
					t.Errorf("Progress = %+v, want read=total=%d lines=%d", p, len(data), len(tt.want))
				}
			})
		}
	}
}

// TestSourceChunksReuse: released chunk buffers are filled again, so that
// a long input at full speed allocates a few buffers, not one per chunk;
// chunks nobody releases are replaced.
func TestSourceChunksReuse(t *testing.T) {
	var sb strings.Builder
	for i := range 100000 {
		fmt.Fprintf(&sb, "line %d of a trace\n", i)
	}
	path := writeFile(t, "in.trace", []byte(sb.String()))
	for _, release := range []bool{true, false} {
		src, err := New(Options{Path: path, Chunks: true})
		if err != nil {
			t.Fatal(err)
		}
		bufs := map[*byte]bool{}
		var data bytes.Buffer
		n := 0
		err = src.Run(t.Context(), func(_ context.Context, b tracecast.Batch) error {
			for _, c := range b.Items.([]tracecast.Chunk) {
				n++
				bufs[&c.Data[:1][0]] = true
				data.Write(c.Data)
				if release {
					c.Release()
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if data.String() != sb.String() {
			t.Fatalf("release %v: the chunks do not put the input back together", release)
		}
		if want := map[bool]int{true: 2, false: n}[release]; len(bufs) > want || n < 20 {
			t.Errorf("release %v: %d buffers for %d chunks, want at most %d", release, len(bufs), n, want)
		}
	}
}

func TestSourceLongLineIsNotBuffered(t *testing.T) {
	// 64 MiB of one line: the error must come long before it is all read.
	const size = 64 << 20
	path := filepath.Join(t.TempDir(), "long")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil { // a sparse file of NUL bytes, no '\n'
		t.Fatal(err)
	}
	f.Close()
	src, err := New(Options{Path: path, MaxLineBytes: 1024})
	if err != nil {
		t.Fatal(err)
	}
	_, err = collect(t, src)
	if err == nil || !strings.Contains(err.Error(), ":1: line longer than 1024 bytes") {
		t.Fatalf("err = %v", err)
	}
	if read := src.Progress().Read; read > 4*readBufferSize {
		t.Errorf("read %d bytes before failing; want at most a few buffers", read)
	}
}

func TestSourceBatching(t *testing.T) {
	var sb strings.Builder
	for i := range 10 {
		fmt.Fprintf(&sb, "line %d\n", i)
	}
	tests := []struct {
		name       string
		batchLines int
		batchBytes int
		wantSizes  []int
	}{
		{"by lines", 3, 0, []int{3, 3, 3, 1}},
		{"default", 0, 0, []int{10}},
		{"by bytes", 100, 12, []int{2, 2, 2, 2, 2}}, // "line N" is 6 bytes
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "in", []byte(sb.String()))
			src, err := New(Options{Path: path, BatchLines: tt.batchLines, BatchBytes: tt.batchBytes})
			if err != nil {
				t.Fatal(err)
			}
			batches, err := collect(t, src)
			if err != nil {
				t.Fatal(err)
			}
			var sizes []int
			for _, b := range batches {
				sizes = append(sizes, len(b))
			}
			if fmt.Sprint(sizes) != fmt.Sprint(tt.wantSizes) {
				t.Errorf("batch sizes %v, want %v", sizes, tt.wantSizes)
			}
			// Batches own their bytes: they are intact after Run returned
			// and appending to one line cannot clobber the next.
			for i, l := range flatten(batches) {
				if want := fmt.Sprintf("line %d", i); l.data != want || l.num != int64(i+1) {
					t.Errorf("line %d = %+v, want %q", i, l, want)
				}
			}
			first := batches[0][0].Data
			_ = append(first, 'X')
			if string(batches[0][1].Data) != "line 1" {
				t.Errorf("appending to a line overwrote the next one: %q", batches[0][1].Data)
			}
		})
	}
}

func TestSourceStdin(t *testing.T) {
	src, err := New(Options{Path: "-", Stdin: strings.NewReader("a\nb\n")})
	if err != nil {
		t.Fatal(err)
	}
	batches, err := collect(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if got := flatten(batches); len(got) != 2 || got[1].data != "b" {
		t.Errorf("lines %v", got)
	}
	if src.Name() != "stdin" || src.Progress().Total != -1 || src.Progress().Read != 4 {
		t.Errorf("name %q progress %+v", src.Name(), src.Progress())
	}
}

func TestNewErrors(t *testing.T) {
	dir := t.TempDir()
	timeOf := func([]byte) (float64, bool) { return 0, false }
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"empty path", Options{}, "path is empty"},
		{"missing", Options{Path: filepath.Join(dir, "nope")}, "no such file"},
		{"directory", Options{Path: dir}, "is a directory"},
		{"pacing without timestamps", Options{Path: "-", Speed: 2}, "needs a parser that can read timestamps"},
		{"negative scale", Options{Path: "-", Speed: 2, TimeOf: timeOf, TimeScale: -1}, "invalid time scale"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestEmitErrorStopsRun(t *testing.T) {
	path := writeFile(t, "in", []byte("a\nb\n"))
	src, err := New(Options{Path: path, BatchLines: 1})
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	calls := 0
	err = src.Run(t.Context(), func(context.Context, tracecast.Batch) error { calls++; return boom })
	if !errors.Is(err, boom) || calls != 1 {
		t.Fatalf("err = %v after %d calls", err, calls)
	}
	if err := src.Run(t.Context(), nil); err == nil {
		t.Error("second Run succeeded")
	}
}

func TestParseSpeed(t *testing.T) {
	tests := []struct {
		in      string
		want    Speed
		wantErr bool
	}{
		{"max", SpeedMax, false},
		{"", SpeedMax, false},
		{"realtime", SpeedRealtime, false},
		{"1x", SpeedRealtime, false},
		{"10x", 10, false},
		{"0.5X", 0.5, false},
		{"0x", 0, true},
		{"-2x", 0, true},
		{"fast", 0, true},
		{"10", 0, true},
		{"infx", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseSpeed(tt.in)
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Fatalf("ParseSpeed(%q) = %v, %v", tt.in, got, err)
			}
			if err == nil {
				if back, _ := ParseSpeed(got.String()); back != got {
					t.Errorf("String() %q does not round-trip", got.String())
				}
			}
		})
	}
}

// timedTrace returns lines "T <ms>" every step ms, preceded by an untimed
// header line.
func timedTrace(n int, stepMS float64) string {
	var sb strings.Builder
	sb.WriteString("%header\n")
	for i := range n {
		fmt.Fprintf(&sb, "T %g\n", float64(i)*stepMS)
	}
	return sb.String()
}

func timeOf(line []byte) (float64, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("T "))
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(rest), 64)
	return f, err == nil
}

func TestPacing(t *testing.T) {
	tests := []struct {
		name     string
		speed    string
		scale    float64
		trace    string
		wantWall time.Duration
	}{
		// 11 lines 1 s apart in ms units: 10 s of trace time.
		{"realtime", "realtime", 1000, timedTrace(11, 1000), 10 * time.Second},
		{"2x", "2x", 1000, timedTrace(11, 1000), 5 * time.Second},
		{"half speed", "0.5x", 1000, timedTrace(11, 1000), 20 * time.Second},
		{"seconds", "10x", 1, timedTrace(11, 1), time.Second},
		// Out of order: pacing follows the running maximum.
		{"out of order", "realtime", 1, "T 0\nT 2\nT 1\nT 3\n", 3 * time.Second},
		// Sub-millisecond steps are not slept individually, yet the total
		// stays exact because deadlines are absolute.
		{"fine steps", "realtime", 1e6, timedTrace(1001, 100), 100 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeFile(t, "in", []byte(tt.trace))
			synctest.Test(t, func(t *testing.T) {
				speed, err := ParseSpeed(tt.speed)
				if err != nil {
					t.Fatal(err)
				}
				src, err := New(Options{Path: path, Speed: speed, TimeOf: timeOf, TimeScale: tt.scale})
				if err != nil {
					t.Fatal(err)
				}
				start := time.Now()
				var lastTrace float64
				var lines int
				err = src.Run(t.Context(), func(ctx context.Context, b tracecast.Batch) error {
					for _, l := range b.Items.([]tracecast.Line) {
						lines++
						if ts, ok := timeOf(l.Data); ok && ts > lastTrace {
							lastTrace = ts
						}
					}
					// Nothing may be released before its time.
					wall := time.Since(start)
					due := time.Duration(lastTrace / tt.scale / float64(speed) * float64(time.Second))
					if wall+minSleep < due {
						t.Errorf("line stamped %g released at %v, due at %v", lastTrace, wall, due)
					}
					return nil
				})
				if err != nil {
					t.Fatal(err)
				}
				if got := time.Since(start); got != tt.wantWall {
					t.Errorf("replay took %v, want %v", got, tt.wantWall)
				}
				if want := strings.Count(tt.trace, "\n"); lines != want {
					t.Errorf("%d lines, want %d", lines, want)
				}
			})
		})
	}
}

func TestPacingStopsOnCancel(t *testing.T) {
	path := writeFile(t, "in", []byte("T 0\nT 3600\n"))
	synctest.Test(t, func(t *testing.T) {
		src, err := New(Options{Path: path, Speed: SpeedRealtime, TimeOf: timeOf})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		var got []string
		err = src.Run(ctx, func(ctx context.Context, b tracecast.Batch) error {
			for _, l := range b.Items.([]tracecast.Line) {
				got = append(got, string(l.Data))
			}
			return nil
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if d := time.Since(start); d != time.Second {
			t.Errorf("stopped after %v, want 1s", d)
		}
		if fmt.Sprint(got) != "[T 0]" {
			t.Errorf("emitted %v, want the first line only", got)
		}
	})
}

// TestSourceCutsLongLines: with CutLinesAt, a line longer than the parser
// accepts reaches it cut (enough for it to refuse the line by number), its
// numbering and offsets unchanged, and the source holds no more of it than
// the cut: a 16 MiB line costs the reader about 1 KiB plus its buffer.
func TestSourceCutsLongLines(t *testing.T) {
	long := strings.Repeat("x", 16<<20)
	for _, gz := range []bool{false, true} {
		data := []byte("a\n" + long + "\r\nb\n" + long)
		if gz {
			data = gzipped(t, data)
		}
		src, err := New(Options{Path: writeFile(t, "cut", data), MaxLineBytes: 64 << 20, CutLinesAt: 1025})
		if err != nil {
			t.Fatal(err)
		}
		got, err := collect(t, src)
		if err != nil {
			t.Fatal(err)
		}
		cut := long[:1025]
		n := int64(len(long))
		want := []wantLine{{"a", 1, 2}, {cut, 2, 2 + n + 2}, {"b", 3, 2 + n + 4}, {cut, 4, 2 + n + 4 + n}}
		if g := flatten(got); fmt.Sprint(g) != fmt.Sprint(want) {
			t.Errorf("gzip %v: lines %.200v, want %.200v", gz, g, want)
		}
	}
	// Chunks (a parser that splits lines itself): the same lines, cut,
	// and the bytes read counted whole.
	for _, gz := range []bool{false, true} {
		data := []byte("a\n" + long + "\r\nb\n" + long + "\n")
		if gz {
			data = gzipped(t, data)
		}
		src, err := New(Options{Path: writeFile(t, "cut", data), MaxLineBytes: 64 << 20, CutLinesAt: 1025, Chunks: true})
		if err != nil {
			t.Fatal(err)
		}
		got, err := collect(t, src)
		if err != nil {
			t.Fatal(err)
		}
		var lines []string
		for _, l := range flatten(got) {
			lines = append(lines, fmt.Sprintf("%d:%.8s(%d)", l.num, l.data, len(l.data)))
		}
		if g, want := strings.Join(lines, " "), "1:a(1) 2:xxxxxxxx(1025) 3:b(1) 4:xxxxxxxx(1025)"; g != want {
			t.Errorf("chunks, gzip %v: lines %s, want %s", gz, g, want)
		}
		if n, want := src.Progress().Read, int64(len("a\n"+long+"\r\nb\n"+long+"\n")); !gz && n != want {
			t.Errorf("chunks: %d bytes read, want %d", n, want)
		}
	}
	// What the reader holds for a line, beside its buffer.
	r := lineReader{br: bufio.NewReaderSize(strings.NewReader(long+"\n"), readBufferSize), max: 64 << 20, cut: 1025}
	line, _, n, _, err := r.next()
	if err != nil || len(line) != 1025 || n != len(long)+1 || cap(r.scratch) > 1025+2+2*readBufferSize {
		t.Fatalf("line %d bytes, %d consumed, scratch %d bytes, err %v", len(line), n, cap(r.scratch), err)
	}
}

// TestSourceSkipsBlankLines: with SkipBlankLines, runs of empty lines
// ("\n", "\r\n") are dropped and the next line keeps its number and
// offset; an input of blank lines only is still a stream (one empty batch).
func TestSourceSkipsBlankLines(t *testing.T) {
	blank := strings.Repeat("\n", 3*readBufferSize) + "\r\n\r\n"
	src, err := New(Options{Path: writeFile(t, "blank", []byte("\n\na\n"+blank+"b\r\n\nc")), SkipBlankLines: true})
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(t, src)
	if err != nil {
		t.Fatal(err)
	}
	b := int64(4 + len(blank))
	want := []wantLine{{"a", 3, 4}, {"b", 3 + 3*readBufferSize + 2 + 1, b + 3}, {"c", 3 + 3*readBufferSize + 2 + 3, b + 3 + 1 + 1}}
	if g := flatten(got); fmt.Sprint(g) != fmt.Sprint(want) {
		t.Errorf("lines %v, want %v", g, want)
	}
	src, _ = New(Options{Path: writeFile(t, "only", []byte(blank)), SkipBlankLines: true})
	got, err = collect(t, src)
	if err != nil || len(got) != 1 || len(got[0]) != 0 {
		t.Fatalf("blank lines only: %v, %v; want one empty batch", got, err)
	}
}

// TestTruncatedGzipNamesTheLine: a gzip input cut short fails at the line
// where its data ends, on both paths (lines and chunks), not at line 1.
func TestTruncatedGzipNamesTheLine(t *testing.T) {
	var sb strings.Builder
	for i := range 5000 {
		fmt.Fprintf(&sb, "line %d of a trace\n", i)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write([]byte(sb.String()))
	zw.Close()
	cut := z.Bytes()[:z.Len()/2]
	// The lines a reader can get before the data ends.
	zr, err := gzip.NewReader(bytes.NewReader(cut))
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(zr)
	want := fmt.Sprintf(":%d: read: ", bytes.Count(got, []byte{'\n'})+1)
	path := writeFile(t, "cut.trace.gz", cut)
	for _, chunks := range []bool{false, true} {
		src, err := New(Options{Path: path, Chunks: chunks})
		if err != nil {
			t.Fatal(err)
		}
		err = src.Run(t.Context(), func(context.Context, tracecast.Batch) error { return nil })
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "truncated or corrupt compressed input") {
			t.Errorf("chunks %v: err = %v, want %q and the reason", chunks, err, want)
		}
	}
}

// TestStopWhileStdinBlocks: a stop ends a source whose standard input (a
// pipe, a terminal: no read deadline) has nothing to read, at once rather
// than when the producer next writes; the lines read before it are
// emitted.
func TestStopWhileStdinBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		pr, pw := io.Pipe()
		src, err := New(Options{Path: "-", Stdin: pr, BatchLines: 1})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		var lines int
		done := make(chan error, 1)
		go func() {
			done <- src.Run(ctx, func(_ context.Context, b tracecast.Batch) error {
				lines += len(b.Items.([]tracecast.Line))
				return nil
			})
		}()
		if _, err := pw.Write([]byte("a\nb\n")); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		cancel()
		synctest.Wait()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("Run: %v, want context.Canceled", err)
			}
		default:
			t.Error("Run still blocked in a read of standard input after the stop")
		}
		if lines != 2 {
			t.Errorf("%d lines emitted before the stop, want 2", lines)
		}
		pw.Close() // the blocked read returns: its goroutine ends
		synctest.Wait()
	})
}
