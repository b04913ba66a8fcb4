package paje

import (
	"bytes"
	"errors"
	"io"
	"strconv"

	"github.com/tracecast/tracecast/internal/input"

	"github.com/klauspost/compress/gzip"
	"github.com/tracecast/tracecast"
)

// BatchSize is how many entities Read hands to its callback at a time.
const BatchSize = 4096

// Read parses a whole trace from r (plain or gzip) and calls fn with batches
// of completed entities; fn must not keep the slice. It returns the parser's
// statistics and the first error: a bad line (strict mode), a read error or
// fn's error.
func Read(r io.Reader, opts Options, fn func([]tracecast.Entity) error) (Stats, error) {
	p := NewParser(opts)
	in, err := input.Decompress(r)
	if err != nil {
		return p.Stats(), inputError(p.opts.Name, err)
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
	p.sim.drain = func() {
		if fnErr == nil {
			flush(BatchSize)
		}
	}
	// Splitting and tokenizing run on their own goroutine, resolving on
	// this one: two cores instead of one.
	chunks, free := make(chan *chunk, 4), make(chan *chunk, 4)
	for range 4 {
		free <- &chunk{}
	}
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		readErr <- tokenizeChunks(in, p.opts.MaxLineBytes, chunks, free, stop)
	}()
	err = nil
	for c := range chunks {
		if err == nil {
			err = p.chunk(c, flush)
		}
		free <- c
		if err != nil {
			close(stop)
			for c := range chunks {
				free <- c
			}
			break
		}
	}
	if rerr := <-readErr; err == nil {
		err = rerr
	}
	if err == nil {
		err = p.Finish()
	}
	if err == nil {
		err = flush(1)
	}
	if err != fnErr {
		err = inputError(p.opts.Name, err)
	}
	return p.Stats(), err
}

// inputError names the input in a read error (a corrupt gzip stream, an I/O
// error): those end the run even in lenient mode, which skips bad lines, not
// unreadable input.
func inputError(name string, err error) error {
	var perr *Error
	if err == nil || errors.As(err, &perr) {
		return err
	}
	reason := "read error: " + err.Error()
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) {
		reason = "truncated or corrupt compressed input: " + err.Error()
	}
	return &Error{File: name, Kind: "input", Reason: reason}
}

// readSerial is Read on one goroutine: what the fuzz target runs, because
// goroutine interleavings make coverage nondeterministic and stall
// coverage-guided fuzzing. Read and readSerial must give the same output
// (TestMutationsTerminate checks it).
func readSerial(r io.Reader, opts Options, fn func([]tracecast.Entity) error) (Stats, error) {
	p := NewParser(opts)
	in, err := input.Decompress(r)
	if err != nil {
		return p.Stats(), inputError(p.opts.Name, err)
	}
	var batch []tracecast.Entity
	err = SplitLines(in, p.opts.MaxLineBytes, func(line []byte, num int64, complete bool) error {
		p.truncated = !complete
		err := p.Line(line, num)
		p.truncated = false
		if err != nil {
			return err
		}
		if p.Pending() >= BatchSize {
			batch = p.Take(batch[:0])
			return fn(batch)
		}
		return nil
	}, func(num int64) error {
		p.stats.Lines++
		return p.bad(num, "line too long", "line longer than "+strconv.Itoa(p.opts.MaxLineBytes)+" bytes (raise --max-line-bytes)")
	})
	if err == nil {
		err = p.Finish()
	}
	if err == nil && p.Pending() > 0 {
		err = fn(p.Take(batch[:0]))
	}
	return p.Stats(), inputError(p.opts.Name, err)
}

// chunk is a run of lines, split and tokenized ahead of the parser.
type chunk struct {
	data  []byte
	lines []chunkLine
	toks  []chunkTok
	// blank counts the lines without a token (empty, or spaces and tabs
	// only) that were dropped: they only count as read.
	blank int64
}

type chunkLine struct {
	num              int64
	off, end         int
	tok, tokEnd      int
	reason           string // the tokenizer's complaint, if any
	tooLong, partial bool
}

type chunkTok struct {
	off, end int
	quoted   bool
}

// A chunk is sent when it holds chunkBytes of line data or chunkLines
// lines, whichever comes first: short lines alone never fill the data.
const (
	chunkBytes = 1 << 18
	chunkLines = 1 << 14
)

// tokenizeChunks splits r into lines, tokenizes them and sends them in
// chunks until r ends or stop is closed. It closes out when done.
func tokenizeChunks(r io.Reader, max int, out chan<- *chunk, free <-chan *chunk, stop <-chan struct{}) error {
	defer close(out)
	var c *chunk
	var toks []token
	next := func() bool {
		select {
		case c = <-free:
		case <-stop:
			return false
		}
		c.data, c.lines, c.toks, c.blank = c.data[:0], c.lines[:0], c.toks[:0], 0
		return true
	}
	send := func() bool {
		select {
		case out <- c:
			c = nil
			return true
		case <-stop:
			return false
		}
	}
	if !next() {
		return nil
	}
	errStopped := errors.New("stopped")
	err := SplitLines(r, max, func(line []byte, num int64, complete bool) error {
		if num == 1 {
			line = input.TrimBOM(line)
		}
		if len(line) == 0 {
			c.blank++
			return nil
		}
		var reason string
		if toks, reason = tokenize(line, toks); len(toks) == 0 && reason == "" {
			// A blank line costs nothing: the parser would ignore it.
			c.blank++
			return nil
		}
		l := chunkLine{num: num, off: len(c.data), tok: len(c.toks), partial: !complete, reason: reason}
		c.data = append(c.data, line...)
		l.end = len(c.data)
		for _, t := range toks {
			off := l.off
			if len(t.b) > 0 {
				off = l.off + cap(line) - cap(t.b)
			}
			c.toks = append(c.toks, chunkTok{off: off, end: off + len(t.b), quoted: t.quoted})
		}
		l.tokEnd = len(c.toks)
		c.lines = append(c.lines, l)
		if len(c.data) >= chunkBytes || len(c.lines) >= chunkLines {
			if !send() || !next() {
				return errStopped
			}
		}
		return nil
	}, func(num int64) error {
		c.lines = append(c.lines, chunkLine{num: num, tooLong: true})
		return nil
	})
	if err == errStopped {
		return nil
	}
	if c != nil && (len(c.lines) > 0 || c.blank > 0) {
		send()
	}
	return err
}

// chunk feeds a tokenized chunk to the parser.
func (p *Parser) chunk(c *chunk, flush func(int) error) error {
	p.stats.Lines += c.blank
	for i := range c.lines {
		l := &c.lines[i]
		var err error
		switch {
		case l.tooLong:
			p.stats.Lines++
			err = p.bad(l.num, "line too long", "line longer than "+strconv.Itoa(p.opts.MaxLineBytes)+" bytes (raise --max-line-bytes)")
		default:
			p.toks = p.toks[:0]
			for _, t := range c.toks[l.tok:l.tokEnd] {
				p.toks = append(p.toks, token{b: c.data[t.off:t.end:t.end], quoted: t.quoted})
			}
			p.truncated = l.partial
			p.stats.Lines++
			err = p.tokens(p.toks, l.reason, l.num)
			p.truncated = false
		}
		if err != nil {
			return err
		}
		if err := flush(BatchSize); err != nil {
			return err
		}
	}
	return nil
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
