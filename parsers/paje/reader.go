package paje

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/tracecast/tracecast/internal/input"

	"github.com/klauspost/compress/gzip"
	"github.com/tracecast/tracecast"
)

// BatchSize is about how many entities Read hands to its callback at a
// time (a Processor emits batches of this size too). With PjdumpQuirks the
// parser holds a few batches back (pj_dump's window): the size bounds that
// memory, 2048 entities of 96 bytes each.
const BatchSize = 2048

// Read parses a whole trace from r (plain or gzip) and calls fn with batches
// of completed entities; fn must not keep the slice. It returns the parser's
// statistics and the first error: a bad line (strict mode), a read error or
// fn's error.
//
// The input is cut into chunks of whole lines. With opts.Threads > 1, one
// goroutine reads (and decompresses) the chunks, opts.Threads goroutines
// split and tokenize them in parallel, and the calling goroutine resolves
// them in input order, so that the output is the same as with one thread:
// the same entities, in the same batches, with the same errors and
// statistics. With one thread everything runs on the calling goroutine.
func Read(r io.Reader, opts Options, fn func([]tracecast.Entity) error) (Stats, error) {
	p := NewParser(opts)
	in, err := input.DecompressDirect(r)
	if err != nil {
		return p.Stats(), inputError(p.opts.Name, err)
	}
	var fnErr error
	send := func(min int) error {
		if fnErr == nil {
			fnErr = p.send(min, fn)
		}
		return fnErr
	}
	p.sim.drain = func() error { return send(BatchSize) }
	sp := input.NewSplitter(in, p.opts.chunkSize(), p.opts.MaxLineBytes)
	if p.opts.Threads > 1 {
		err = p.readParallel(sp, p.opts.Threads, send)
	} else {
		err = p.readChunks(sp, send)
	}
	if err == nil {
		err = p.Finish()
	}
	if err == nil {
		err = send(1)
	}
	if err != fnErr {
		err = inputError(p.opts.Name, err)
	}
	return p.Stats(), err
}

// readChunks reads the chunks one after the other on this goroutine.
func (p *Parser) readChunks(sp *input.Splitter, send func(int) error) error {
	c := newChunk()
	for {
		ok, err := sp.Fill(&c.Chunk)
		if !ok {
			return err
		}
		c.tokenize(p.opts.MaxLineBytes, p.hdr.snap.Load())
		if err := p.chunk(c, send); err != nil {
			return err
		}
	}
}

// readParallel reads chunks on one goroutine, tokenizes them on threads
// goroutines and resolves them here, in order. At most threads+3 chunks
// exist at a time: one being filled, one per thread, one being resolved
// and one ready.
func (p *Parser) readParallel(sp *input.Splitter, threads int, send func(int) error) error {
	n := chunksInFlight(threads)
	free := make(chan *chunk, n)
	work := make(chan *chunk, n)
	order := make(chan *chunk, n)
	for range n {
		free <- newChunk()
	}
	stop := make(chan struct{})
	readErr := make(chan error, 1)
	go func() {
		defer close(order)
		defer close(work)
		for {
			var c *chunk
			select {
			case <-stop: // before a free chunk, which may be ready too
				readErr <- nil
				return
			default:
			}
			select {
			case c = <-free:
			case <-stop:
				readErr <- nil
				return
			}
			ok, err := sp.Fill(&c.Chunk)
			if !ok {
				readErr <- err
				return
			}
			// Both channels have room for every chunk: these never block.
			order <- c
			work <- c
		}
	}()
	var wg sync.WaitGroup
	for range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				c.tokenize(p.opts.MaxLineBytes, p.hdr.snap.Load())
				c.done <- struct{}{}
			}
		}()
	}
	var err error
	for c := range order {
		<-c.done
		if err == nil {
			if err = p.chunk(c, send); err != nil {
				close(stop)
			}
		}
		free <- c
	}
	wg.Wait()
	if rerr := <-readErr; err == nil {
		err = rerr
	}
	return err
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

// readSerial reads line by line with SplitLines and Parser.Line, on one
// goroutine: the reference the chunked paths are checked against, and what
// the fuzz target runs (goroutine interleavings make coverage
// nondeterministic and stall coverage-guided fuzzing). Read and readSerial
// give the same output, statistics and errors (TestMutationsTerminate,
// FuzzParallel).
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

// DefaultChunkBytes is the size of the chunks Read cuts its input into
// (a chunk grows, up to MaxLineBytes+1, only to hold a line longer than
// this).
const DefaultChunkBytes = 64 << 10

// chunk is a run of whole lines of the input, with their tokens once
// tokenized. A chunk is at most MaxChunkBytes.
type chunk struct {
	// Chunk holds the lines: whole lines, each with its newline, except
	// the input's last line, which may lack it.
	input.Chunk

	// Filled by tokenize.
	lines   []lineRec
	toks    []token // slices of Data
	reasons []string
	bits    []uint64 // Data's special bytes (markSpecials)
	nlines  int64    // lines in the chunk, blank ones included

	done chan struct{} // receives once the chunk is tokenized
	// release, when set, gives Data back to whoever filled it (a
	// tracecast.Chunk's source) once the chunk is resolved.
	release func()
}

// lineRec is one non-blank line of a chunk.
type lineRec struct {
	rel      uint32 // 1-based line number within the chunk
	tok, end uint32 // its tokens are toks[tok:end]
	reason   int32  // index in reasons of the tokenizer's complaint, or -1
	flags    uint8
	dec      decoded
}

// decoded is what is worked out ahead of the parser, in parallel, for an
// event line whose definition was already known: the definition (nil if
// not decoded), the time, a variable's value and the name keys of the fields
// the simulator looks up. Definitions are never replaced, so the one
// found is the one the parser would find.
type decoded struct {
	def           *eventDef
	time, val     float64
	timeOK, valOK bool
	// hc and ht are the nameKey of the Container and Type fields (0
	// for a field the event lacks): the keys of the simulator's caches.
	hc, ht uint64
}

// hashFields sets the name keys of toks, an event's fields after its id.
func (dec *decoded) hashFields(d *eventDef, toks []token) {
	dec.hc, dec.ht = 0, 0
	if i := d.idx[fContainer]; i >= 0 {
		dec.hc = nameKey(toks[i].b)
	}
	if i := d.idx[fType]; i >= 0 {
		dec.ht = nameKey(toks[i].b)
	}
}

// decode fills dec for a line's tokens with the definitions of snap.
func (dec *decoded) decode(toks []token, snap *defSnap) {
	*dec = decoded{}
	if len(toks) == 0 || snap == nil {
		return // blank, or no definition yet
	}
	// snap.lookup, with numID's one- and two-digit ids written out (not
	// header lines, which start with '%').
	var d *eventDef
	switch b := toks[0].b; {
	case len(b) == 2 && b[0]-'1' < 9 && b[1]-'0' < 10:
		d = snap.byNum[int(b[0]-'0')*10+int(b[1]-'0')]
	case len(b) == 1 && b[0]-'0' < 10:
		d = snap.byNum[b[0]-'0']
	case !toks[0].quoted() && len(b) > 0 && b[0] == '%':
		return // a header line
	default:
		d = snap.lookup(b)
	}
	if d == nil || len(toks)-1 != d.nfields {
		return
	}
	dec.def = d
	// parseFixed first, here: parseFloat's own first step, one call
	// less for nearly every number.
	if i := d.idx[fTime]; i >= 0 {
		if dec.time, dec.timeOK = parseFixed(toks[1+i].b); !dec.timeOK {
			dec.time, dec.timeOK = parseFloat(toks[1+i].b)
		}
	}
	switch d.kind {
	case evSetVariable, evAddVariable, evSubVariable:
		b := toks[1+d.idx[fValue]].b
		if dec.val, dec.valOK = parseFixed(b); !dec.valOK {
			dec.val, dec.valOK = parseFloat(b)
		}
	}
	// hashFields, written out: a call less a line (dec is zeroed).
	if i := d.idx[fContainer]; i >= 0 {
		dec.hc = nameKey(toks[1+i].b)
	}
	if i := d.idx[fType]; i >= 0 {
		dec.ht = nameKey(toks[1+i].b)
	}
}

const (
	linePartial uint8 = 1 << iota // the input's last line, without a newline
	lineTooLong                   // longer than MaxLineBytes
)

// MaxChunkBytes bounds a chunk, and so the longest line Read accepts
// whatever MaxLineBytes says: offsets into a chunk are 31-bit.
const MaxChunkBytes = input.MaxChunkBytes

func newChunk() *chunk { return &chunk{done: make(chan struct{}, 1)} }

// chunksInFlight is the most chunks Read or a processor holds with threads
// goroutines: those being tokenized ahead of the one being resolved.
func chunksInFlight(threads int) int {
	if threads <= 1 {
		return 1
	}
	return threads + 3
}

// tokenize splits c into lines, tokenizes them and decodes their events
// with the definitions of snap (any goroutine). Blank lines are only
// counted.
func (c *chunk) tokenize(max int, snap *defSnap) {
	c.lines, c.toks, c.reasons, c.nlines = c.lines[:0], c.toks[:0], c.reasons[:0], 0
	if c.TooLong {
		c.nlines = 1
		c.lines = append(c.lines, lineRec{rel: 1, reason: -1, flags: lineTooLong})
		return
	}
	data := c.Data
	// Room for the chunk's tokens and lines at once: grown by append,
	// 1.25 times at a step, the arrays cost five times their final size
	// in fresh memory (6.6 MB on the 41 MB trace, for four chunks' worth).
	// A StarPU line is about 37 bytes and 5 fields: one token per 6
	// bytes and one line per 24 is room for it, and a denser input grows
	// from there. The size is rounded up to 16 KiB, so that chunks a
	// few bytes apart (cut at line ends) reuse the same arrays.
	size := (len(data) + 16<<10 - 1) &^ (16<<10 - 1)
	if want := size / 6; cap(c.toks) < want {
		c.toks = make([]token, 0, want)
	}
	if want := size / 24; cap(c.lines) < want {
		c.lines = make([]lineRec, 0, want)
	}
	c.bits = markSpecials(c.bits, data)
	for pos := 0; pos < len(data); {
		c.nlines++
		ls := pos // where the tokens start
		if c.nlines == 1 && c.First && bytes.HasPrefix(data, input.BOM) {
			ls += len(input.BOM)
		}
		// Tokens go straight after the chunk's others; when they do
		// not fit, the array is doubled and the line tokenized again.
		start := len(c.toks)
		var toks []token
		var reason string
		end := len(data)
		if ls < end {
			for {
				toks, reason, end = tokenizeBits(data, c.bits, ls, c.toks[start:])
				if reason != reasonFull {
					break
				}
				grown := make([]token, start, 2*cap(c.toks)+16)
				copy(grown, c.toks)
				c.toks = grown
			}
		}
		var flags uint8
		next := end + 1
		if end == len(data) {
			flags, next = linePartial, end
		}
		if end-pos > max {
			c.lines = append(c.lines, lineRec{rel: uint32(c.nlines), reason: -1, flags: lineTooLong})
			pos = next
			continue
		}
		pos = next
		if len(toks) == 0 && reason == "" {
			continue // blank: nothing to resolve
		}
		c.toks = c.toks[:start+len(toks)] // stored there
		// Filled in place: a record built aside and appended was
		// copied with loads its own stores could not forward, a stall
		// per line (see sim.emit).
		// Not zeroed first: every field is set below (decode sets dec).
		if n := len(c.lines); n < cap(c.lines) {
			c.lines = c.lines[:n+1]
		} else {
			c.lines = append(c.lines, lineRec{})
		}
		l := &c.lines[len(c.lines)-1]
		l.rel, l.tok, l.end, l.reason, l.flags = uint32(c.nlines), uint32(start), uint32(len(c.toks)), -1, flags
		if reason != "" {
			l.reason = int32(len(c.reasons))
			c.reasons = append(c.reasons, reason)
			l.dec = decoded{}
		} else {
			l.dec.decode(toks, snap)
		}
	}
}

// chunk resolves a tokenized chunk; send is called after every line with
// the batch size to reach.
func (p *Parser) chunk(c *chunk, send func(int) error) error {
	base := p.stats.Lines
	for i := range c.lines {
		l := &c.lines[i]
		num := base + int64(l.rel)
		p.stats.Lines = num
		var err error
		if d := l.dec.def; d != nil && l.flags == 0 && p.err == nil && p.hdr.cur == nil && p.unit != "" {
			// Most lines: an event line decoded ahead (a known
			// definition, its number of fields), the time unit known,
			// outside a definition: what tokens would check.
			p.stats.Events++
			p.setPre(&l.dec)
			toks := c.toks[l.tok+1 : l.end]
			if t := l.dec.time; d.idx[fTime] >= 0 && l.dec.timeOK && t <= MaxTime && t >= -MaxTime {
				// process, written out for a time decoded and in
				// range: a call less a line.
				if serr := p.sim.event(d, toks, t, num); serr != nil {
					err = p.eventErr(serr, num)
				}
			} else {
				err = p.process(d, toks, num)
			}
		} else if l.flags&lineTooLong != 0 {
			err = p.bad(num, "line too long", "line longer than "+strconv.Itoa(p.opts.MaxLineBytes)+" bytes (raise --max-line-bytes)")
		} else {
			reason := ""
			if l.reason >= 0 {
				reason = c.reasons[l.reason]
			}
			p.truncated = l.flags&linePartial != 0
			p.setPre(&l.dec)
			err = p.tokens(c.toks[l.tok:l.end], reason, num)
			p.truncated = false
			p.setPre(&p.noPre)
		}
		if err != nil {
			p.setPre(&p.noPre)
			return err
		}
		// send does nothing below a batch: not called for nothing
		// after every line.
		if p.Pending() >= BatchSize {
			if err := send(BatchSize); err != nil {
				return err
			}
		}
	}
	p.setPre(&p.noPre)
	p.stats.Lines = base + c.nlines
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
