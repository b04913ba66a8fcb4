package iocall

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracecast/tracecast"
)

// Format is an input format.
type Format string

// The formats Read understands.
const (
	FormatStrace Format = "strace"
	FormatCSV    Format = "csv"
	FormatJSONL  Format = "jsonl"
)

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

// Read parses r in the given format ("" detects it) and calls fn for each
// I/O call. Lines longer than opts.MaxLineBytes are errors ("line too
// long"), or skipped in lenient mode.
func Read(r io.Reader, format Format, opts Options, fn func(*tracecast.IOCall) error) (Stats, error) {
	opts.defaults()
	br := bufio.NewReaderSize(r, 256<<10)
	if format == "" {
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
				st := p.Stats()
				if !opts.Lenient {
					return st, &Error{File: opts.File, Line: num, Kind: "line too long", Reason: fmt.Sprintf("line longer than %d bytes", opts.MaxLineBytes)}
				}
				if lp, ok := p.(interface{ skip(string) }); ok {
					lp.skip("line too long")
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
				if !opts.Lenient {
					return p.Stats(), &Error{File: opts.File, Line: num, Kind: "line too long", Reason: fmt.Sprintf("line longer than %d bytes", opts.MaxLineBytes)}
				}
				if lp, ok := p.(interface{ skip(string) }); ok {
					lp.skip("line too long")
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

// ReadFile reads a whole file ("-" is standard input) into a slice.
func ReadFile(path string, format Format, opts Options) ([]tracecast.IOCall, Stats, error) {
	var r io.Reader = os.Stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, Stats{}, err
		}
		defer f.Close()
		r = f
	}
	if opts.File == "" {
		opts.File = path
	}
	var out []tracecast.IOCall
	st, err := Read(r, format, opts, func(c *tracecast.IOCall) error { out = append(out, *c); return nil })
	return out, st, err
}

func (p *Parser) skip(reason string) { p.stats.Skipped[reason]++ }

// BatchSize is the number of calls per emitted batch.
const BatchSize = 1024

// NewProcessor returns a pipeline processor that parses batches of
// tracecast.Line into batches of []tracecast.IOCall.
func NewProcessor(format Format, opts Options) (tracecast.Processor, error) {
	p, err := NewFormatParser(format, opts)
	if err != nil {
		return nil, err
	}
	return &processor{p: p}, nil
}

type processor struct {
	p   LineParser
	out []tracecast.IOCall
}

func (pr *processor) Process(ctx context.Context, in tracecast.Batch, emit tracecast.Emit) error {
	lines, ok := in.Items.([]tracecast.Line)
	if !ok {
		return fmt.Errorf("iocall: expects lines, got %T", in.Items)
	}
	for i := range lines {
		c, ok, err := pr.p.Line(lines[i].Data, lines[i].Num)
		if err != nil {
			return err
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

func (pr *processor) Flush(ctx context.Context, emit tracecast.Emit) error {
	pr.p.Finish()
	return pr.emit(ctx, "", emit)
}
