package paje

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/klauspost/compress/gzip"
	"github.com/tracecast/tracecast"
)

// OpenReader wraps r so that gzip-compressed input (recognised by its magic
// bytes) is decompressed transparently.
func OpenReader(r io.Reader) (io.Reader, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, err := br.Peek(2)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, err
		}
		return zr, nil
	}
	return br, nil
}

// BatchSize is how many entities Read hands to its callback at a time.
const BatchSize = 4096

// Read parses a whole trace from r (plain or gzip) and calls fn with batches
// of completed entities; fn must not keep the slice. It returns the parser's
// statistics and the first error: a bad line (strict mode), a read error or
// fn's error.
func Read(r io.Reader, opts Options, fn func([]tracecast.Entity) error) (Stats, error) {
	p := NewParser(opts)
	in, err := OpenReader(r)
	if err != nil {
		return p.Stats(), &Error{File: p.opts.Name, Reason: "cannot read input: " + err.Error()}
	}
	var batch []tracecast.Entity
	var fnErr error
	flush := func(min int) error {
		if p.Pending() < min {
			return nil
		}
		batch = p.Take(batch[:0])
		fnErr = fn(batch)
		return fnErr
	}
	err = SplitLines(in, p.opts.MaxLineBytes, func(line []byte, num int64, complete bool) error {
		var err error
		if complete {
			err = p.Line(line, num)
		} else {
			err = p.lastLine(line, num)
		}
		if err != nil {
			return err
		}
		return flush(BatchSize)
	}, func(num int64) error {
		return p.bad(num, "line too long", "line longer than "+strconv.Itoa(p.opts.MaxLineBytes)+" bytes (raise --max-line-bytes)")
	})
	if err == nil {
		err = p.Finish()
	}
	if err == nil {
		err = flush(1)
	}
	var perr *Error
	if err != nil && err != fnErr && !errors.As(err, &perr) {
		err = &Error{File: p.opts.Name, Reason: "read error: " + err.Error()}
	}
	return p.Stats(), err
}

// lastLine feeds a final line that had no newline: if it does not parse, the
// likely cause is a truncated file, and the error says so.
func (p *Parser) lastLine(data []byte, num int64) error {
	p.truncated = true
	defer func() { p.truncated = false }()
	return p.Line(data, num)
}

// SplitLines calls fn for every line of r (without '\n' or a trailing '\r'),
// with its 1-based number; complete is false for a last line that has no
// newline. A line longer than max is not buffered: tooLong is called with its
// number and, if it returns nil, the line is skipped.
func SplitLines(r io.Reader, max int, fn func(line []byte, num int64, complete bool) error, tooLong func(num int64) error) error {
	bufSize := 1 << 18
	if max+1 > bufSize {
		bufSize = max + 1
	}
	buf := make([]byte, bufSize)
	start, end := 0, 0
	scanned := 0 // buf[start:scanned] holds no newline
	var num int64
	skipping := false
	eof := false
	for {
		// Hand out every complete line in buf[start:end].
		for {
			i := bytes.IndexByte(buf[scanned:end], '\n')
			if i < 0 {
				scanned = end
				break
			}
			i += scanned - start
			line := buf[start : start+i]
			start += i + 1
			scanned = start
			if skipping {
				skipping = false
				continue
			}
			num++
			if len(line) > max {
				if err := tooLong(num); err != nil {
					return err
				}
				continue
			}
			if n := len(line); n > 0 && line[n-1] == '\r' {
				line = line[:n-1]
			}
			if err := fn(line, num, true); err != nil {
				return err
			}
		}
		if eof {
			if start < end && !skipping {
				num++
				line := buf[start:end]
				if len(line) > max {
					return tooLong(num)
				}
				return fn(line, num, false)
			}
			return nil
		}
		// Keep the partial line, make room, read more.
		if start > 0 && (end == len(buf) || start > len(buf)/2) {
			end = copy(buf, buf[start:end])
			scanned -= start
			start = 0
		}
		if end-start > max && !skipping {
			// The partial line is already too long: report it and drop
			// bytes until its newline.
			num++
			if err := tooLong(num); err != nil {
				return err
			}
			skipping = true
		}
		if skipping {
			start, end, scanned = 0, 0, 0
		}
		n, err := r.Read(buf[end:])
		end += n
		if err == io.EOF {
			eof = true
		} else if err != nil {
			return err
		}
	}
}
