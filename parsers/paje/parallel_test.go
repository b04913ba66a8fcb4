package paje

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/gziptest"
	"github.com/tracecast/tracecast/internal/input"
	"go.uber.org/goleak"
)

// readResult is everything a read produces: the entities in order, the
// size of each batch, the statistics and the error.
type readResult struct {
	es      []tracecast.Entity
	batches []int
	st      Stats
	err     error
	// sum, when digesting, stands for es: a hash of every field of every
	// entity, in order.
	sum [sha256.Size]byte
}

type readFunc func(io.Reader, Options, func([]tracecast.Entity) error) (Stats, error)

func collect(read readFunc, data []byte, o Options) readResult {
	var r readResult
	r.st, r.err = read(bytes.NewReader(data), o, func(es []tracecast.Entity) error {
		r.es = append(r.es, es...)
		r.batches = append(r.batches, len(es))
		return nil
	})
	return r
}

// digest is collect for large outputs: it keeps a hash of the entities
// instead of the entities.
func digest(read readFunc, data []byte, o Options) readResult {
	var r readResult
	h := sha256.New()
	var b []byte
	r.st, r.err = read(bytes.NewReader(data), o, func(es []tracecast.Entity) error {
		for i := range es {
			b = appendEntity(b[:0], &es[i])
			h.Write(b)
		}
		r.batches = append(r.batches, len(es))
		return nil
	})
	h.Sum(r.sum[:0])
	return r
}

// appendEntity encodes every field of e, unambiguously.
func appendEntity(b []byte, e *tracecast.Entity) []byte {
	str := func(s string) {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	b = append(b, byte(e.Nature))
	str(e.Container)
	str(e.Type)
	for _, f := range []float64{e.Start, e.End, e.Number} {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
	}
	b = binary.AppendVarint(b, int64(e.Imbrication))
	str(e.Value)
	str(e.StartContainer())
	str(e.EndContainer())
	str(e.Key())
	b = binary.AppendUvarint(b, uint64(len(e.Extra())))
	for _, f := range e.Extra() {
		str(f.Name)
		str(f.Value)
	}
	return b
}

func sameEntity(a, b *tracecast.Entity) bool {
	return a.Nature == b.Nature && a.Container == b.Container && a.Type == b.Type &&
		math.Float64bits(a.Start) == math.Float64bits(b.Start) && math.Float64bits(a.End) == math.Float64bits(b.End) &&
		a.Imbrication == b.Imbrication && a.Value == b.Value && math.Float64bits(a.Number) == math.Float64bits(b.Number) &&
		a.StartContainer() == b.StartContainer() && a.EndContainer() == b.EndContainer() && a.Key() == b.Key() &&
		slices.Equal(a.Extra(), b.Extra())
}

// isInputError reports an unreadable input (a corrupt gzip stream): where
// it stops depends on how the input was cut into reads.
func isInputError(err error) bool {
	var perr *Error
	return errors.As(err, &perr) && perr.Kind == "input"
}

// sameRead compares two reads of one input. With batches, the batches must
// be the same too (two runs of Read); readSerial batches differently (it
// does not drain at the end of the trace).
func sameRead(t *testing.T, what string, got, want readResult, batches bool) {
	t.Helper()
	if (got.err == nil) != (want.err == nil) || got.err != nil && got.err.Error() != want.err.Error() {
		t.Fatalf("%s: error %v, want %v", what, got.err, want.err)
	}
	if isInputError(want.err) {
		return
	}
	if want.err != nil && !batches {
		// In strict mode Read may have handed out more before the error
		// (its end-of-trace drain): the error is what must agree.
		return
	}
	if !reflect.DeepEqual(got.st, want.st) {
		t.Fatalf("%s: stats %+v, want %+v", what, got.st, want.st)
	}
	if len(got.es) != len(want.es) {
		t.Fatalf("%s: %d entities, want %d", what, len(got.es), len(want.es))
	}
	for i := range got.es {
		if !sameEntity(&got.es[i], &want.es[i]) {
			t.Fatalf("%s: entity %d is %+v, want %+v", what, i, got.es[i], want.es[i])
		}
	}
	if got.sum != want.sum {
		t.Fatalf("%s: different entities (digests differ)", what)
	}
	if batches && !reflect.DeepEqual(got.batches, want.batches) {
		t.Fatalf("%s: batches %v, want %v", what, got.batches, want.batches)
	}
}

// nonEmpty is r without its empty batches, which Read hands out and a
// Processor does not emit.
func nonEmpty(r readResult) readResult {
	r.batches = slices.DeleteFunc(slices.Clone(r.batches), func(n int) bool { return n == 0 })
	return r
}

// withThreads returns o reading with threads goroutines and chunks of
// chunkBytes (0: the default).
func withThreads(o Options, threads, chunkBytes int) Options {
	o.Threads, o.chunkBytes = threads, chunkBytes
	return o
}

// readModes are the option sets every trace is read with.
func readModes(name string) map[string]Options {
	all := DefaultOptions()
	all.Name = name
	lenient := all
	lenient.Lenient, lenient.UserDefined, lenient.NoStrict, lenient.IgnoreIncompleteLinks = true, true, true, true
	return map[string]Options{"pjdump": pjOpts(name), "all": all, "lenient": lenient}
}

// checkParallel reads data sequentially (readSerial, line by line) and in
// chunks of each size with 1, 2 and 3 threads, and requires the same
// output. Chunk sizes after the first are tried in the pjdump mode only
// unless all is set.
func checkParallel(t *testing.T, name string, data []byte, chunkSizes []int, all bool) {
	for mode, o := range readModes(name) {
		want := collect(readSerial, data, o)
		one := collect(Read, data, withThreads(o, 1, 0))
		sameRead(t, name+" "+mode+": threads 1", one, want, false)
		for k, size := range chunkSizes {
			if k > 0 && !all && mode != "pjdump" {
				break
			}
			c1 := one
			if size != 0 {
				c1 = collect(Read, data, withThreads(o, 1, size))
				sameRead(t, name+" "+mode+": threads 1, chunks of "+itoa(size), c1, one, false)
			}
			for _, threads := range []int{2, 3} {
				got := collect(Read, data, withThreads(o, threads, size))
				sameRead(t, name+" "+mode+": threads "+itoa(threads)+", chunks of "+itoa(size), got, c1, true)
			}
			procThreads := []int{1, 3}
			if raceEnabled {
				// Under the race detector: the parallel path, one mode.
				procThreads = map[bool][]int{true: {3}}[mode == "pjdump"]
			}
			for _, threads := range procThreads {
				chunkSize := size
				if size == 0 {
					chunkSize = DefaultChunkBytes
				}
				got := processChunks(t, data, withThreads(o, threads, 0), chunkSize)
				sameRead(t, name+" "+mode+": processor, threads "+itoa(threads)+", chunks of "+itoa(chunkSize), got, nonEmpty(c1), true)
			}
		}
	}
}

// TestParallelTestdata: parallel reading gives the sequential output on
// every trace of the repository, with chunks down to a few bytes (lines
// spread over several chunks, chunks grown for long lines).
func TestParallelTestdata(t *testing.T) {
	traces, _ := filepath.Glob("../../testdata/*/*.trace*")
	more, _ := filepath.Glob("../../pipelines/testdata/*.trace*")
	traces = append(traces, more...)
	if len(traces) < 5 {
		t.Fatalf("only %d traces in testdata", len(traces))
	}
	for _, tr := range traces {
		t.Run(filepath.Base(tr), func(t *testing.T) {
			t.Parallel()
			data := readTrace(t, tr)
			sizes := []int{0, 4096, 100}
			if len(data) < 200<<10 {
				sizes = append(sizes, 7)
			}
			if raceEnabled && len(data) > 200<<10 {
				sizes = []int{0}
			}
			checkParallel(t, tr, data, sizes, true)
		})
	}
}

// TestParallelShared: the same on every trace of shared/traces (skipped
// when they are absent), including those pj_dump rejects.
func TestParallelShared(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: every shared trace in every mode (make test-long; TestParallelTestdata covers the repository's)")
	}
	needShared(t)
	var traces []string
	filepath.WalkDir(sharedTraces, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".trace") || strings.HasSuffix(path, ".trace.gz")) {
			traces = append(traces, path)
		}
		return nil
	})
	if len(traces) == 0 {
		t.Fatal("no traces in shared/traces")
	}
	for _, tr := range traces {
		t.Run(strings.TrimPrefix(tr, sharedTraces+"/"), func(t *testing.T) {
			data := readTrace(t, tr)
			if raceEnabled && len(data) > 200<<10 {
				// Under the race detector: one mode, two threads.
				o := pjOpts(tr)
				o.ReorderHorizon = -1
				want := digest(Read, data, withThreads(o, 1, 0))
				sameRead(t, "threads 2", digest(Read, data, withThreads(o, 2, 4096)), want, false)
				return
			}
			if len(data) > 4<<20 {
				// The 41 MB trace: one mode, default chunks.
				o := pjOpts(tr)
				o.ReorderHorizon = -1
				want := digest(Read, data, withThreads(o, 1, 0))
				sameRead(t, "threads 2", digest(Read, data, withThreads(o, 2, 0)), want, true)
				return
			}
			checkParallel(t, tr, data, []int{0, 4096}, false)
		})
	}
}

// readTrace returns a trace's bytes, gzip-compressed ones compressed:
// Read decompresses them itself.
func readTrace(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestParallelEdges: inputs whose lines fall on chunk boundaries in every
// way — long lines, lines too long, CRLF, a byte order mark, a last line
// without a newline, blank lines, errors — give the sequential output with
// any chunk size and thread count.
func TestParallelEdges(t *testing.T) {
	body := "4 1 w1 S Idle\r\n\n   \n5 2 w1 S \"" + strings.Repeat("x", 300) + "\" t\n" +
		"4 3 w1 S " + strings.Repeat("A", 5000) + "\n6 3.5 w1 S\n# comment\n4 4 w2 S Run"
	cases := map[string]string{
		"body":           hdr + body,
		"newline at end": hdr + body + "\n",
		"bom":            "\ufeff" + hdr + body,
		"crlf only":      hdr + "\r\n\r\n",
		"empty":          "",
		"no newline":     "%",
		"long last line": hdr + strings.Repeat("B", 6000),
		"error":          hdr + "4 1 w9 S Idle\n" + body,
		"binary":         hdr + "4 1 w1 S Id\x00le\n" + body,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			for mode, o := range readModes("x") {
				o.MaxLineBytes = 4096
				want := collect(readSerial, []byte(in), o)
				for _, size := range []int{1, 2, 3, 5, 64, 4095, 4096, 4097, 0} {
					one := collect(Read, []byte(in), withThreads(o, 1, size))
					sameRead(t, mode+" threads 1 chunks "+itoa(size), one, want, false)
					got := collect(Read, []byte(in), withThreads(o, 4, size))
					sameRead(t, mode+" threads 4 chunks "+itoa(size), got, one, true)
					for _, threads := range []int{1, 4} {
						got = processChunks(t, []byte(in), withThreads(o, threads, 0), max(size, 1))
						sameRead(t, mode+" processor threads "+itoa(threads)+" chunks "+itoa(size), got, nonEmpty(one), true)
					}
				}
			}
		})
	}
}

// TestParallelStops: an error in the middle of a long input stops the
// readers and tokenizers (no goroutine is left running, no deadlock), and
// so does an error from the callback.
func TestParallelStops(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	data := gziptest.ReadFile(t, starpuTrace)
	half := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	bad := append(append([]byte(nil), data[:half]...), []byte("42 1 w1 S Idle\n")...)
	bad = append(bad, data[half:]...)
	o := withThreads(DefaultOptions(), 3, 4096)
	if _, err := Read(bytes.NewReader(bad), o, func([]tracecast.Entity) error { return nil }); err == nil || !strings.Contains(err.Error(), "unknown event id '42'") {
		t.Fatalf("got %v", err)
	}
	stop := errors.New("enough")
	n := 0
	_, err := Read(bytes.NewReader(data), o, func([]tracecast.Entity) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Fatalf("got %v, want the callback's error", err)
	}
}

// TestProcessorStops: a processor fed chunks one at a time tokenizes
// them ahead on goroutines that may outlive a call; a call that fails (a
// bad line, an error from emit) and Flush wait for them all, and every
// chunk handed over is released.
func TestProcessorStops(t *testing.T) {
	data := gziptest.ReadFile(t, starpuTrace)
	half := bytes.IndexByte(data[len(data)/2:], '\n') + len(data)/2 + 1
	bad := append(append([]byte(nil), data[:half]...), []byte("42 1 w1 S Idle\n")...)
	bad = append(bad, data[half:]...)
	stop := errors.New("enough")
	for _, tc := range []struct {
		name    string
		in      []byte
		emitErr bool
		want    string
	}{
		{"bad line", bad, false, "unknown event id '42'"},
		{"emit error", data, true, "enough"},
		{"flushed", data, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			pr := newProcessor(withThreads(pjOpts(starpuTrace), 3, 0))
			n := 0
			emit := func(context.Context, tracecast.Batch) error {
				if n++; tc.emitErr && n == 3 {
					return stop
				}
				return nil
			}
			ctx := context.Background()
			var handed, released int
			var err error
			for i, d := range cutChunks(t, tc.in, 4096) {
				handed++
				c := tracecast.Chunk{Data: d, First: i == 0, Lines: int64(bytes.Count(d, []byte{'\n'})), Release: func() { released++ }}
				if err = pr.Process(ctx, tracecast.Batch{Stream: "s", Items: []tracecast.Chunk{c}}, emit); err != nil {
					break
				}
			}
			if err == nil {
				err = pr.Flush(ctx, emit)
			}
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			// Released on the processor's goroutine: no race with this count.
			if released != handed {
				t.Errorf("%d chunks released, %d handed over", released, handed)
			}
		})
	}
}

// processLines runs a Processor over data cut into batches of batch lines
// and returns what it emitted.
func processLines(data []byte, o Options, batch int) readResult {
	var r readResult
	pr := NewProcessor(o)
	emit := func(_ context.Context, b tracecast.Batch) error {
		es := b.Items.([]tracecast.Entity)
		r.es = append(r.es, es...)
		r.batches = append(r.batches, len(es))
		return nil
	}
	var lines []tracecast.Line
	flush := func() bool {
		if r.err = pr.Process(context.Background(), tracecast.Batch{Stream: "s", Items: lines}, emit); r.err != nil {
			return false
		}
		lines = lines[:0]
		return true
	}
	num := int64(0)
	for l := range bytes.SplitSeq(bytes.TrimSuffix(data, []byte{'\n'}), []byte{'\n'}) {
		num++
		lines = append(lines, tracecast.Line{Data: bytes.TrimSuffix(l, []byte{'\r'}), Num: num})
		if len(lines) == batch && !flush() {
			break
		}
	}
	if r.err == nil && (len(lines) == 0 || flush()) {
		r.err = pr.Flush(context.Background(), emit)
	}
	r.st = pr.(*processor).Stats()
	return r
}

// processChunks runs a Processor over data cut into tracecast.Chunks of
// about size bytes, as a file source at full speed hands them over (per
// batch one or two chunks), and returns what it emitted. Every
// chunk must be released once, after it was handed over.
func processChunks(t testing.TB, data []byte, o Options, size int) readResult {
	t.Helper()
	var r readResult
	in, err := input.Decompress(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	pr := NewProcessor(o)
	emit := func(_ context.Context, b tracecast.Batch) error {
		es := b.Items.([]tracecast.Entity)
		r.es = append(r.es, es...)
		r.batches = append(r.batches, len(es))
		if b.Recycle != nil {
			// Scribbled on, then filled again by the parser.
			for i := range es {
				es[i] = tracecast.Entity{Value: "recycled"}
			}
			b.Recycle()
		}
		return nil
	}
	sp := input.NewSplitter(in, max(size, 1), 1<<30)
	var batch []tracecast.Chunk
	handed, released := 0, 0
	ctx := context.Background()
	for n := 0; r.err == nil; n++ {
		var c input.Chunk
		ok, err := sp.Fill(&c)
		if err != nil {
			r.err = err
			break
		}
		if ok {
			handed++
			batch = append(batch, tracecast.Chunk{Data: c.Data, First: c.First, Lines: int64(bytes.Count(c.Data, []byte{'\n'})), Release: func() {
				released++
				// The parser must be done with the bytes.
				for i := range c.Buf {
					c.Buf[i] = '#'
				}
			}})
		}
		if len(batch) > 0 && (!ok || len(batch) >= 1+n%2) {
			r.err = pr.Process(ctx, tracecast.Batch{Stream: "s", Items: batch}, emit)
			batch = nil
		}
		if !ok {
			if r.err == nil {
				if handed == 0 {
					r.err = pr.Process(ctx, tracecast.Batch{Stream: "s", Items: []tracecast.Line{}}, emit)
				}
				if r.err == nil {
					r.err = pr.Flush(ctx, emit)
				}
			}
			break
		}
	}
	if r.err == nil && released != handed {
		t.Fatalf("%d chunks released, %d handed over", released, handed)
	}
	if released > handed {
		t.Fatalf("%d chunks released, only %d handed over", released, handed)
	}
	r.st = pr.(*processor).Stats()
	// Flushed, the parser keeps no token pointing into the source's
	// buffers (they are not cleared chunk by chunk).
	for _, c := range pr.(*processor).cq.spare {
		for _, tk := range c.toks[:cap(c.toks)] {
			if r.err == nil && tk.b != nil {
				t.Fatalf("after Flush, a spare chunk's token still points into a source buffer: %q", tk.b)
			}
		}
	}
	return r
}

// TestProcessorThreads: a Processor tokenizing its batches on several
// goroutines emits what it does on one, batch for batch.
func TestProcessorThreads(t *testing.T) {
	traces, _ := filepath.Glob("../../testdata/smpi/*.trace")
	inputs := map[string][]byte{"starpu": gziptest.ReadFile(t, starpuTrace)}
	for _, tr := range traces {
		inputs[filepath.Base(tr)] = readTrace(t, tr)
	}
	inputs["edges"] = []byte("\ufeff" + hdr + "4 1 w1 S Idle\n\n5 2 w1 S " + strings.Repeat("A", 5000) + " t\n6 3 w1 S\n# c\n4 4 w9 S Run\n4 5 w1 S Idle\n")
	batches := []int{1, 300, 1024, 5000}
	if raceEnabled {
		batches = []int{300}
	}
	for name, data := range inputs {
		for mode, o := range readModes(name) {
			o.MaxLineBytes = 4096
			for _, batch := range batches {
				want := processLines(data, withThreads(o, 1, 0), batch)
				got := processLines(data, withThreads(o, 3, 0), batch)
				sameRead(t, name+" "+mode+" batches of "+itoa(batch), got, want, true)
			}
		}
	}
}

// TestParallelDefinitions: types and value aliases defined between events,
// and aliases redefined, in every position relative to the chunks: what
// the decoding goroutines work out ahead (decoded) never stands for what
// such a definition changes, and the output stays the sequential one.
func TestParallelDefinitions(t *testing.T) {
	var b strings.Builder
	b.WriteString(hdr + `%EventDef PajeDefineEntityValue 10
% Alias string
% Type string
% Name string
%EndEventDef
10 a0 S Idle
10 a1 S Run
`)
	now := 1.0
	for i := range 3000 {
		now += 0.001
		switch {
		case i%97 == 0:
			// An alias redefined, and used on the next line.
			fmt.Fprintf(&b, "10 a%d S \"Name %d\"\n", i%3, i)
		case i%251 == 0:
			// A new state type, used at once.
			fmt.Fprintf(&b, "1 T%d W \"Type %d\"\n4 %.3f w2 T%d a1\n", i, i, now, i)
		case i%13 == 0:
			fmt.Fprintf(&b, "4 %.3f w1 S v%d\n", now, i%5) // not an alias
		default:
			fmt.Fprintf(&b, "4 %.3f w%d S a%d\n", now, 1+i%2, i%3)
		}
	}
	checkParallel(t, "definitions", []byte(b.String()), []int{0, 4096, 100, 37}, true)
}
