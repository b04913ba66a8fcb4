package file

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync/atomic"
	"time"

	"github.com/tracecast/tracecast/internal/input"

	"github.com/klauspost/compress/gzip"
	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
)

// Defaults for Options fields left at zero.
const (
	DefaultBatchLines   = 1024
	DefaultBatchBytes   = 4 << 20
	DefaultMaxLineBytes = 1 << 20
	// readBufferSize is the size of the line reader's buffer; lines that fit
	// are copied once (into the batch arena), longer ones twice.
	readBufferSize = 64 << 10
)

// Options configure a Source. Only Path is required.
type Options struct {
	// Path is the file to replay, or "-" for standard input.
	Path string
	// Name is the stream name put in batches and error messages. Default:
	// Path, or "stdin" for "-".
	Name string
	// Stdin replaces os.Stdin when Path is "-" (for tests and embedding).
	Stdin io.Reader
	// BatchLines is the maximum number of lines per batch (default 1024).
	BatchLines int
	// BatchBytes bounds the line bytes of one batch (default 4 MiB), so that
	// a file of very long lines does not make batches of a gigabyte: memory
	// in flight stays about edge capacity × BatchBytes.
	BatchBytes int
	// MaxLineBytes is the longest accepted line, terminator excluded
	// (default 1 MiB). A longer line is an error, detected before more than
	// MaxLineBytes plus one read buffer is held in memory.
	MaxLineBytes int
	// CutLinesAt, when positive (and at most MaxLineBytes), cuts a longer
	// line to its first CutLinesAt bytes, reading and dropping the rest:
	// for a parser that refuses lines longer than CutLinesAt-1 (it names
	// the line, or skips it when lenient), holding the whole line would
	// only cost memory.
	CutLinesAt int
	// SkipBlankLines drops empty lines ("" or "\r") in bulk, for parsers
	// that ignore them: the next line keeps its number.
	SkipBlankLines bool
	// StrictEOL makes a last line without '\n' an error. Otherwise it is
	// emitted marked Partial, Stats().Truncated is set and a warning is
	// logged: a trace that is still being written, or was cut by a crash,
	// ends that way.
	StrictEOL bool
	// Speed paces the replay by trace time; SpeedMax (zero) disables pacing.
	Speed Speed
	// TimeOf extracts a line's trace timestamp. It is called for every line,
	// in order, only when pacing; lines for which it reports !ok (headers,
	// definitions, comments) are released without waiting. Without TimeOf,
	// pacing is impossible and New fails if Speed is not SpeedMax.
	TimeOf func(line []byte) (t float64, ok bool)
	// TimeScale is the number of trace time units per second (1 for
	// SimGrid's seconds, 1000 for StarPU's milliseconds). Default 1.
	TimeScale float64
	// Clock drives pacing (default SystemClock).
	Clock Clock
	// Logger receives warnings (truncated last line) and debug messages.
	Logger zerolog.Logger
	// Chunks makes Run emit batches of one tracecast.Chunk (runs of whole
	// lines, not copied line by line) instead of []tracecast.Line, for a
	// parser that splits lines itself (component.Parser.Chunks). It
	// applies only without pacing, which needs each line's time.
	Chunks bool
}

// Progress is a snapshot of how far a Source is through its input.
type Progress struct {
	// Read counts bytes read from the file as stored (compressed bytes for
	// gzip), comparable with Total.
	Read int64
	// Total is the file size, or -1 when unknown (standard input, pipes).
	Total int64
	// Lines counts lines emitted so far.
	Lines int64
}

// Stats describe what a Source has read.
type Stats struct {
	// Lines counts lines emitted (the same counter as Progress.Lines).
	Lines int64
	// Bytes counts decompressed bytes consumed (the last Line.End).
	Bytes int64
	// Gzip is true when the input was gzip-compressed.
	Gzip bool
	// Truncated is true when the last line had no terminating '\n'.
	Truncated bool
}

// Source replays a file as batches of []tracecast.Line. It implements
// tracecast.Source. Progress and Stats may be called from any goroutine while
// Run is executing.
type Source struct {
	opts Options

	read      atomic.Int64 // stored bytes read
	total     atomic.Int64
	lines     atomic.Int64
	bytes     atomic.Int64 // decompressed bytes consumed
	gzip      atomic.Bool
	truncated atomic.Bool
	ran       atomic.Bool
}

// New checks opts and returns a Source. The file is only opened by Run, so
// building a pipeline has no side effect, but a missing file is reported
// here, before anything starts.
func New(opts Options) (*Source, error) {
	if opts.Path == "" {
		return nil, errors.New("file source: path is empty")
	}
	if opts.Name == "" {
		opts.Name = opts.Path
		if opts.Path == "-" {
			opts.Name = "stdin"
		}
	}
	if opts.BatchLines <= 0 {
		opts.BatchLines = DefaultBatchLines
	}
	if opts.BatchBytes <= 0 {
		opts.BatchBytes = DefaultBatchBytes
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultMaxLineBytes
	}
	if opts.TimeScale == 0 {
		opts.TimeScale = 1
	}
	if opts.TimeScale < 0 || math.IsNaN(opts.TimeScale) || math.IsInf(opts.TimeScale, 0) {
		return nil, fmt.Errorf("file source %s: invalid time scale %g", opts.Name, opts.TimeScale)
	}
	if opts.Speed < 0 || math.IsNaN(float64(opts.Speed)) || math.IsInf(float64(opts.Speed), 0) {
		return nil, fmt.Errorf("file source %s: invalid speed %g", opts.Name, float64(opts.Speed))
	}
	if opts.Speed != SpeedMax && opts.TimeOf == nil {
		return nil, fmt.Errorf("file source %s: speed %s needs a parser that can read timestamps", opts.Name, opts.Speed)
	}
	if opts.Clock == nil {
		opts.Clock = SystemClock
	}
	s := &Source{opts: opts}
	s.total.Store(-1)
	if opts.Path != "-" {
		fi, err := os.Stat(opts.Path)
		if err != nil {
			return nil, fmt.Errorf("file source: %w", err)
		}
		if fi.IsDir() {
			return nil, fmt.Errorf("file source: %s is a directory", opts.Path)
		}
		if fi.Mode().IsRegular() {
			s.total.Store(fi.Size())
		}
	}
	return s, nil
}

// Reread returns a source that reads the same input again, from its
// start, at full speed (component.Rereadable): a stage that needs a first
// pass over the whole input (an automatic sampling period) gets one. ok is
// false for standard input and anything but a regular file (a pipe, a
// device), which cannot be read twice.
func (s *Source) Reread() (tracecast.Source, bool) {
	if s.opts.Path == "-" {
		return nil, false
	}
	fi, err := os.Stat(s.opts.Path)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, false
	}
	o := s.opts
	o.Speed, o.TimeOf = SpeedMax, nil
	again, err := New(o)
	if err != nil {
		return nil, false
	}
	return again, true
}

// Name is the stream name used in batches and errors.
func (s *Source) Name() string { return s.opts.Name }

// Progress returns the current progress; safe for concurrent use.
func (s *Source) Progress() Progress {
	return Progress{Read: s.read.Load(), Total: s.total.Load(), Lines: s.lines.Load()}
}

// Stats returns what has been read so far; safe for concurrent use.
func (s *Source) Stats() Stats {
	return Stats{
		Lines:     s.lines.Load(),
		Bytes:     s.bytes.Load(),
		Gzip:      s.gzip.Load(),
		Truncated: s.truncated.Load(),
	}
}

// Run reads the input to the end, emitting batches, and returns nil at end of
// file. When ctx is cancelled it stops at the next batch boundary (or wakes
// from a pacing sleep) and returns ctx.Err(); the lines of a partly filled
// batch are then dropped, like any data a stopping source has not handed
// over. An empty input is emitted as one empty batch, so that its stream
// exists downstream (an empty trace still has its root container). Run
// may be called once.
func (s *Source) Run(ctx context.Context, emit tracecast.Emit) error {
	if s.ran.Swap(true) {
		return fmt.Errorf("file source %s: Run called twice", s.opts.Name)
	}
	in, closeIn, err := s.open(ctx)
	if err != nil {
		return err
	}
	defer closeIn()

	cr := &countingReader{r: in, n: &s.read}
	br := bufio.NewReaderSize(cr, readBufferSize)
	var r io.Reader
	if input.IsGzip(br) {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return fmt.Errorf("%s: gzip: %w", s.opts.Name, err)
		}
		defer zr.Close()
		s.gzip.Store(true)
		r = zr
	}
	if s.opts.Chunks && s.opts.Speed == SpeedMax {
		if r == nil {
			r = input.Unbuffered(br, cr)
		}
		return s.chunkLoop(ctx, r, emit)
	}
	lr := lineReader{br: br, max: s.opts.MaxLineBytes, skipBlank: s.opts.SkipBlankLines}
	if c := s.opts.CutLinesAt; c > 0 && c <= s.opts.MaxLineBytes {
		lr.cut = c
	}
	if s.gzip.Load() {
		lr.br = bufio.NewReaderSize(r, readBufferSize)
	}
	return s.loop(ctx, &lr, emit)
}

// open returns the input stream and a func that releases it. Standard
// input, unless it is a regular file, is read through a stopReader: a pipe
// or a terminal ignores read deadlines, so a read blocked there would hold
// a graceful stop until the producer writes again (and a hard stop for its
// grace period). A file opened by path that Go polls (a named pipe) is
// woken by a read deadline instead.
func (s *Source) open(ctx context.Context) (io.Reader, func(), error) {
	if s.opts.Path == "-" {
		var in io.Reader = os.Stdin
		if s.opts.Stdin != nil {
			in = s.opts.Stdin
		}
		if f, ok := in.(*os.File); ok {
			if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
				return f, func() {}, nil
			}
		}
		return &stopReader{ctx: ctx, r: in}, func() {}, nil
	}
	f, err := os.Open(s.opts.Path)
	if err != nil {
		return nil, nil, fmt.Errorf("file source: %w", err)
	}
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
		s.total.Store(fi.Size())
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Now()) })
	return f, func() { stop(); _ = f.Close() }, nil
}

// stopReader reads r on a goroutine of its own, into its own buffer, so
// that Read returns ctx's error as soon as ctx is done even while the read
// is blocked. That goroutine then stays blocked until r returns (the
// producer writes or closes): at worst until the process exits.
type stopReader struct {
	ctx     context.Context
	r       io.Reader
	buf     []byte
	pending chan stopRead // the read under way, if any
}

type stopRead struct {
	n   int
	err error
}

func (s *stopReader) Read(p []byte) (int, error) {
	if s.pending == nil {
		if err := s.ctx.Err(); err != nil {
			return 0, err
		}
		if cap(s.buf) < len(p) {
			s.buf = make([]byte, len(p))
		}
		buf, ch := s.buf[:len(p)], make(chan stopRead, 1)
		s.pending = ch
		go func() {
			n, err := s.r.Read(buf)
			ch <- stopRead{n, err}
		}()
	}
	select {
	case res := <-s.pending:
		s.pending = nil
		return copy(p, s.buf[:res.n]), res.err
	case <-s.ctx.Done():
		return 0, s.ctx.Err()
	}
}

// batcher accumulates lines into one arena per batch. Line data are sliced
// out of the arena only when the batch is sealed, because the arena may be
// reallocated while it grows.
type batcher struct {
	lines  []tracecast.Line
	spans  []int // end offset in arena of each line
	arena  []byte
	sizing int // capacity hint for the next arena
}

func (b *batcher) reset(batchLines int) {
	b.lines = make([]tracecast.Line, 0, batchLines)
	b.spans = b.spans[:0]
	b.arena = make([]byte, 0, b.sizing)
}

func (b *batcher) add(data []byte, num, end int64) {
	b.arena = append(b.arena, data...)
	b.spans = append(b.spans, len(b.arena))
	b.lines = append(b.lines, tracecast.Line{Num: num, End: end})
}

// seal sets Data on every line and returns the batch's lines.
func (b *batcher) seal() []tracecast.Line {
	start := 0
	for i, end := range b.spans {
		b.lines[i].Data = b.arena[start:end:end]
		start = end
	}
	// Next arena: the size this one reached, plus slack, so that a steady
	// stream allocates each arena once without growing it.
	b.sizing = len(b.arena) + len(b.arena)/8
	return b.lines
}

func (s *Source) loop(ctx context.Context, lr *lineReader, emit tracecast.Emit) error {
	o := &s.opts
	var b batcher
	b.sizing = 64 << 10
	b.reset(o.BatchLines)
	var pace *pacer
	if o.Speed != SpeedMax {
		pace = &pacer{clock: o.Clock, perSec: o.TimeScale * float64(o.Speed)}
	}

	flush := func() error {
		if len(b.lines) == 0 {
			return nil
		}
		lines := b.seal()
		b.reset(o.BatchLines)
		if err := emit(ctx, tracecast.Batch{Stream: o.Name, Items: lines, Watermark: math.NaN()}); err != nil {
			return err
		}
		s.lines.Add(int64(len(lines)))
		return nil
	}

	var num, offset, emitted int64
	for {
		line, nl, n, blank, err := lr.next()
		num += int64(blank)
		if err != nil && !errors.Is(err, io.EOF) {
			if errors.Is(err, errLineTooLong) {
				return fmt.Errorf("%s:%d: line longer than %d bytes", o.Name, num+1, o.MaxLineBytes)
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return readError(o.Name, num+1, err)
		}
		if n == 0 { // clean end of input
			if emitted == 0 {
				// An empty input is still a stream (an empty trace):
				// one empty batch makes it known downstream.
				return emit(ctx, tracecast.Batch{Stream: o.Name, Items: []tracecast.Line{}, Watermark: math.NaN()})
			}
			return flush()
		}
		num++
		offset += int64(n)
		s.bytes.Store(offset)
		if !nl {
			if o.StrictEOL {
				return fmt.Errorf("%s:%d: truncated last line (no newline at end of file)", o.Name, num)
			}
			s.truncated.Store(true)
			o.Logger.Warn().Str("stream", o.Name).Int64("line", num).
				Msg("last line has no newline at end of file: the trace may be incomplete")
		}
		if pace != nil {
			if t, ok := o.TimeOf(line); ok {
				if d := pace.delay(t); d >= minSleep {
					// Hand over what is due now, then wait: downstream sees
					// the trace as it would have appeared live.
					if err := flush(); err != nil {
						return err
					}
					if err := o.Clock.Sleep(ctx, d); err != nil {
						return err
					}
				}
			}
		}
		b.add(line, num, offset)
		emitted++
		if !nl {
			b.lines[len(b.lines)-1].Partial = true
		}
		if len(b.lines) >= o.BatchLines || len(b.arena) >= o.BatchBytes {
			select {
			case <-ctx.Done():
				return ctx.Err()
			default:
			}
			if err := flush(); err != nil {
				return err
			}
		}
	}
}

// chunkBytes is the size of the chunks of Options.Chunks, and
// chunkPool how many of their buffers are kept for reuse: the edge to
// the parser and the parser's own queue hold about that many.
const (
	chunkBytes = 64 << 10
	chunkPool  = 32
)

// chunkLoop hands the input out as chunks of whole lines (Options.Chunks),
// one per batch. Their buffers come back through Chunk.Release and are
// reused; a line longer than MaxLineBytes (plus a carriage return) is an
// error, as in the line loop.
func (s *Source) chunkLoop(ctx context.Context, r io.Reader, emit tracecast.Emit) error {
	o := &s.opts
	free := make(chan []byte, chunkPool)
	// A parser that refuses long lines itself gets them cut, as in the
	// line loop: it names the line (or skips it when lenient) and no more
	// than its limit is held.
	cut := o.CutLinesAt > 0 && o.CutLinesAt <= o.MaxLineBytes
	sp := input.NewSplitter(r, chunkBytes, o.MaxLineBytes+1)
	if cut {
		sp = input.NewSplitter(r, chunkBytes, o.CutLinesAt)
		sp.Cut = true
	}
	var num, offset int64
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var c input.Chunk
		select {
		case c.Buf = <-free:
		default:
		}
		ok, err := sp.Fill(&c)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			// c.Buf holds what was read of the chunk: the error is in
			// the line after its complete ones.
			at := num + int64(bytes.Count(c.Buf, []byte{'\n'})) + 1
			return readError(o.Name, at, err)
		}
		if !ok {
			if num == 0 {
				// An empty input is still a stream (an empty trace).
				return emit(ctx, tracecast.Batch{Stream: o.Name, Items: []tracecast.Line{}, Watermark: math.NaN()})
			}
			return nil
		}
		if c.TooLong {
			return fmt.Errorf("%s:%d: line longer than %d bytes", o.Name, num+1, o.MaxLineBytes)
		}
		if !cut && len(c.Data) > o.MaxLineBytes {
			// The splitter allows one byte more, for a carriage return:
			// a line that long without one is too long.
			if i := longLine(c.Data, o.MaxLineBytes); i > 0 {
				return fmt.Errorf("%s:%d: line longer than %d bytes", o.Name, num+i, o.MaxLineBytes)
			}
		}
		lines := int64(bytes.Count(c.Data, []byte{'\n'}))
		if c.Data[len(c.Data)-1] != '\n' {
			// Only the input's last line may lack its newline.
			lines++
			if o.StrictEOL {
				return fmt.Errorf("%s:%d: truncated last line (no newline at end of file)", o.Name, num+lines)
			}
			s.truncated.Store(true)
			o.Logger.Warn().Str("stream", o.Name).Int64("line", num+lines).
				Msg("last line has no newline at end of file: the trace may be incomplete")
		}
		num += lines
		offset += int64(len(c.Data))
		s.bytes.Store(offset + sp.Dropped())
		buf := c.Buf
		ch := tracecast.Chunk{Data: c.Data, Lines: lines, First: c.First, Release: func() {
			select {
			case free <- buf[:0]:
			default: // the pool is full: left to the collector
			}
		}}
		if err := emit(ctx, tracecast.Batch{Stream: o.Name, Items: []tracecast.Chunk{ch}, Watermark: math.NaN()}); err != nil {
			return err
		}
		s.lines.Add(lines)
	}
}

// longLine returns the 1-based number in data of the first line longer
// than max bytes once its terminator ("\n" or "\r\n") is removed, or 0.
func longLine(data []byte, max int) int64 {
	for n := int64(1); len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte{'\n'})
		if len(bytes.TrimSuffix(line, []byte{'\r'})) > max {
			return n
		}
		data = rest
	}
	return 0
}

var errLineTooLong = errors.New("line too long")

// lineReader splits a stream on '\n' without holding more than max bytes
// (plus one read buffer) for a single line, or cut bytes when cut is set.
type lineReader struct {
	br  *bufio.Reader
	max int
	// cut, when positive, cuts longer lines to their first cut bytes.
	cut int
	// skipBlank drops empty lines.
	skipBlank bool
	scratch   []byte
}

// next returns the next line without its terminator ("\n" or "\r\n"),
// whether it ended with '\n', the number of stream bytes it consumed (0 at
// end of input) and, with skipBlank, how many blank lines it dropped
// before it (their bytes counted in n). line is valid until the next call.
func (r *lineReader) next() (line []byte, nl bool, n, blank int, err error) {
	if r.skipBlank {
		var skipped int
		if blank, skipped, err = r.skipBlankLines(); err != nil {
			return nil, false, 0, blank, err
		}
		n = skipped
	}
	frag, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.scratch = append(r.scratch[:0], frag...)
		total := len(frag)
		for errors.Is(err, bufio.ErrBufferFull) {
			// +2 leaves room for a "\r\n" that may still come.
			if r.cut == 0 && total > r.max+2 {
				return nil, false, n + total, blank, errLineTooLong
			}
			frag, err = r.br.ReadSlice('\n')
			total += len(frag)
			if r.cut == 0 || len(r.scratch) < r.cut+2 {
				r.scratch = append(r.scratch, frag...)
			} else if len(frag) > 0 && frag[len(frag)-1] == '\n' {
				// Past the cut: keep only the terminator.
				r.scratch = append(r.scratch, '\n')
			}
		}
		frag = r.scratch
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, 0, blank, err
		}
		n += total
	} else {
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, false, 0, blank, err
		}
		n += len(frag)
	}
	line, nl = bytes.CutSuffix(frag, []byte{'\n'})
	line = bytes.TrimSuffix(line, []byte{'\r'})
	if r.cut > 0 && len(line) > r.cut {
		line = line[:r.cut]
	}
	if len(line) > r.max {
		return nil, false, n, blank, errLineTooLong
	}
	if len(frag) == 0 {
		n = 0 // nothing after the blank lines: the end of input
	}
	return line, nl, n, blank, err
}

// skipBlankLines consumes the empty lines ("\n", "\r\n") at the reading
// position, a buffer at a time: how many, and their bytes.
func (r *lineReader) skipBlankLines() (lines, bytes int, err error) {
	for {
		if r.br.Buffered() == 0 {
			if _, err := r.br.Peek(1); err != nil {
				if errors.Is(err, io.EOF) {
					return lines, bytes, nil
				}
				return lines, bytes, err
			}
		}
		buf, _ := r.br.Peek(r.br.Buffered())
		i := 0
		for i < len(buf) {
			if buf[i] == '\n' {
				i++
				lines++
			} else if buf[i] == '\r' && i+1 < len(buf) && buf[i+1] == '\n' {
				i += 2
				lines++
			} else {
				break
			}
		}
		r.br.Discard(i)
		bytes += i
		if i < len(buf) || i == 0 {
			// A line with content (or a lone '\r' at the buffer's end,
			// left to ReadSlice).
			return lines, bytes, nil
		}
	}
}

// countingReader counts the bytes read from the underlying (stored) file.
type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// readError says where and why reading the input failed; a gzip stream cut
// short or damaged is said to be so.
func readError(name string, line int64, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
		return fmt.Errorf("%s:%d: read: truncated or corrupt compressed input: %w", name, line, err)
	}
	return fmt.Errorf("%s:%d: read: %w", name, line, err)
}
