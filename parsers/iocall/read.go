package iocall

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/pipelines/component"
)

// Format is an input format.
type Format string

// The formats Read understands.
const (
	FormatStrace Format = "strace"
	FormatCSV    Format = "csv"
	FormatJSONL  Format = "jsonl"
	// FormatAuto detects the format of each input from its name and first
	// line (Detect), as the commands do: one profile may be an strace log,
	// the next its CSV conversion.
	FormatAuto Format = "auto"
)

// ParseFormat reads a format name: strace, csv, jsonl or auto; "" is
// strace, the parser's default in a pipeline.
func ParseFormat(s string) (Format, error) {
	switch f := Format(s); f {
	case "":
		return FormatStrace, nil
	case FormatStrace, FormatCSV, FormatJSONL, FormatAuto:
		return f, nil
	}
	return "", fmt.Errorf("%q is not auto, strace, csv or jsonl", s)
}

// LineParser is what every format's parser does: one line in, at most one
// call out.
type LineParser interface {
	Line(data []byte, num int64) (tracecast.IOCall, bool, error)
	Finish()
	Stats() Stats
}

// NewFormatParser returns the parser for a format.
func NewFormatParser(f Format, opts Options) (LineParser, error) {
	switch f {
	case FormatStrace, "":
		return NewParser(opts), nil
	case FormatCSV:
		return NewCSVParser(opts), nil
	case FormatJSONL:
		return NewJSONParser(opts), nil
	}
	return nil, fmt.Errorf("unknown I/O-call format %q (strace, csv or jsonl)", f)
}

// Detect guesses the format from a file name and its first line: .csv or a
// header starting with "time," is CSV; .jsonl/.ndjson/.json or a line
// starting with '{' is JSON lines; anything else is strace.
func Detect(name string, first []byte) Format {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".csv":
		return FormatCSV
	case ".jsonl", ".ndjson", ".json":
		return FormatJSONL
	}
	first = bytes.TrimSpace(first)
	switch {
	case bytes.HasPrefix(first, []byte("{")):
		return FormatJSONL
	case bytes.HasPrefix(first, []byte("time,")):
		return FormatCSV
	}
	return FormatStrace
}

// Read parses r in the given format ("" or FormatAuto detects it) and calls
// fn for each I/O call. Lines longer than opts.MaxLineBytes are errors
// ("line too long"), or skipped in lenient mode.
func Read(r io.Reader, format Format, opts Options, fn func(*tracecast.IOCall) error) (Stats, error) {
	opts.defaults()
	br := bufio.NewReaderSize(r, 256<<10)
	input.SkipBOM(br)
	if format == "" || format == FormatAuto {
		peek, _ := br.Peek(4096)
		if i := bytes.IndexByte(peek, '\n'); i >= 0 {
			peek = peek[:i]
		}
		format = Detect(opts.File, peek)
	}
	p, err := NewFormatParser(format, opts)
	if err != nil {
		return Stats{}, err
	}
	var num int64
	var long []byte
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				if len(long) <= opts.MaxLineBytes {
					long = append(long, line...)
				}
			}
			if len(long) <= opts.MaxLineBytes {
				line = long
			} else {
				num++
				if lerr := tooLong(p, &opts, num); lerr != nil {
					return p.Stats(), lerr
				}
				if err == io.EOF {
					break
				}
				if err != nil {
					return p.Stats(), err
				}
				continue
			}
		}
		if len(line) > 0 {
			num++
			if len(line) > opts.MaxLineBytes+1 {
				if lerr := tooLong(p, &opts, num); lerr != nil {
					return p.Stats(), lerr
				}
			} else {
				c, ok, perr := p.Line(line, num)
				if perr != nil {
					return p.Stats(), perr
				}
				if ok {
					if err := fn(&c); err != nil {
						return p.Stats(), err
					}
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return p.Stats(), err
		}
	}
	p.Finish()
	return p.Stats(), nil
}

// ReadFile reads a whole file ("-" is standard input), plain or gzip, into
// a slice.
func ReadFile(path string, format Format, opts Options) ([]tracecast.IOCall, Stats, error) {
	r, _, closeIn, err := input.Open(path)
	if err != nil {
		return nil, Stats{}, err
	}
	defer closeIn()
	if opts.File == "" {
		opts.File = path
	}
	var out []tracecast.IOCall
	st, err := Read(r, format, opts, func(c *tracecast.IOCall) error { out = append(out, *c); return nil })
	return out, st, err
}

func (p *Parser) skip(reason string) { p.stats.Skipped[reason]++ }

// tooLong handles line num, longer than opts.MaxLineBytes: an error, or in
// lenient mode a line skipped as "line too long". The line is not given to
// the parser, which would hold it whole.
func tooLong(p LineParser, opts *Options, num int64) error {
	if !opts.Lenient {
		return &Error{File: opts.File, Line: num, Kind: "line too long", Reason: fmt.Sprintf("line longer than %d bytes", opts.MaxLineBytes)}
	}
	if lp, ok := p.(interface{ skip(string) }); ok {
		lp.skip("line too long")
	}
	return nil
}

// logStats reports what a parse of file read: the lines skipped in lenient
// mode as a warning (results leave them out, the user should know), the
// counts at debug level.
func logStats(l zerolog.Logger, file string, st Stats) {
	if n := st.Skipped.Total(); n > 0 {
		l.Warn().Str("file", file).Int64("skipped", n).Interface("reasons", st.Skipped).Msg("skipped bad lines")
	}
	l.Debug().Str("file", file).Int64("lines", st.Lines).Int64("calls", st.Calls).Int64("unmatched", st.Unmatched).Msg("read I/O calls")
}

// BatchSize is the number of calls per emitted batch.
const BatchSize = 1024

// NewProcessor returns a pipeline processor that parses batches of
// tracecast.Line into batches of []tracecast.IOCall, as Read does: with
// FormatAuto the format is detected from opts.File and the first line, and
// lines longer than opts.MaxLineBytes are errors or, in lenient mode,
// skipped. At Flush (the end of the input) it logs its Stats to
// opts.Logger.
func NewProcessor(format Format, opts Options) (tracecast.Processor, error) {
	opts.defaults()
	pr := &processor{opts: opts}
	if format == FormatAuto {
		return pr, nil // the parser is chosen at the first line
	}
	p, err := NewFormatParser(format, opts)
	if err != nil {
		return nil, err
	}
	pr.p = p
	return pr, nil
}

type processor struct {
	opts Options
	p    LineParser // nil until the first line when the format is detected
	// started is set at the first line (a BOM there is skipped).
	started bool
	out     []tracecast.IOCall
}

// detect chooses the parser from the input's name and first line.
func (pr *processor) detect(first []byte) {
	// Detect names a known format, which NewFormatParser always accepts.
	pr.p, _ = NewFormatParser(Detect(pr.opts.File, first), pr.opts)
}

func (pr *processor) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	lines, ok := in.Items.([]tracecast.Line)
	if !ok {
		return fmt.Errorf("iocall: expects lines, got %T", in.Items)
	}
	// The calls before a bad line are good: like Read, hand them over
	// before failing (a sink stopped by the failure may still miss them).
	fail := func(err error) error {
		if eerr := pr.emit(ctx, in.Stream, emit); eerr != nil {
			return eerr
		}
		return err
	}
	for i := range lines {
		data := lines[i].Data
		if !pr.started {
			pr.started = true
			data = input.TrimBOM(data)
		}
		if pr.p == nil {
			pr.detect(data)
		}
		if len(data) > pr.opts.MaxLineBytes {
			if err := tooLong(pr.p, &pr.opts, lines[i].Num); err != nil {
				return fail(err)
			}
			continue
		}
		c, ok, err := pr.p.Line(data, lines[i].Num)
		if err != nil {
			return fail(err)
		}
		if ok {
			pr.out = append(pr.out, c)
		}
	}
	return pr.emit(ctx, in.Stream, emit)
}

func (pr *processor) emit(ctx context.Context, stream string, emit tracecast.Emit) error {
	if len(pr.out) == 0 {
		return nil
	}
	b := tracecast.Batch{Stream: stream, Items: pr.out, Watermark: pr.out[len(pr.out)-1].Time}
	pr.out = make([]tracecast.IOCall, 0, BatchSize)
	return emit(ctx, b)
}

// Metrics reports the lines read, the calls emitted and the lines skipped
// by reason (component.MetricsReporter).
func (pr *processor) Metrics(add func(component.Metric)) {
	if pr.p == nil {
		return // no line yet
	}
	st := pr.p.Stats()
	component.LineMetrics(add, st.Lines, st.Skipped)
	add(component.Metric{Name: "io_calls_total", Help: "I/O calls a parser emitted", Value: float64(st.Calls), Counter: true})
}

func (pr *processor) Flush(ctx context.Context, emit tracecast.Emit) error {
	if pr.p == nil {
		pr.detect(nil) // an empty input: its stats come from the parser its name implies
	}
	pr.p.Finish()
	logStats(pr.opts.Logger, pr.opts.File, pr.p.Stats())
	return pr.emit(ctx, "", emit)
}
