package paje

import (
	"container/heap"
	"strconv"

	"github.com/tracecast/tracecast"
)

// Parser resolves a Paje trace fed to it line by line. It is not safe for
// concurrent use; use one Parser per stream.
type Parser struct {
	opts    Options
	hdr     *header
	sim     *sim
	toks    []token
	stats   Stats
	err     error
	horizon float64
	unit    string

	// The reorder buffer: in-order arrivals queue in fifo, late ones in
	// late (a heap). Both release in (time, sequence) order.
	fifo       []*pending
	fifoHead   int
	late       pendingHeap
	free       []*pending
	seq        uint64
	maxArrived float64
	watermark  float64
	released   bool
	buffered   int
	truncated  bool

	// held is the output held back for pj_dump's window (compat.go).
	held     []quirkBatch
	finished bool
}

type pending struct {
	t    float64
	seq  uint64
	line int64
	data []byte
}

type pendingHeap []*pending

func (h pendingHeap) Len() int { return len(h) }
func (h pendingHeap) Less(i, j int) bool {
	return h[i].t < h[j].t || h[i].t == h[j].t && h[i].seq < h[j].seq
}
func (h pendingHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *pendingHeap) Push(x any)   { *h = append(*h, x.(*pending)) }
func (h *pendingHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// NewParser returns a parser with the given options.
func NewParser(opts Options) *Parser {
	if opts.Name == "" {
		opts.Name = "-"
	}
	if opts.MaxLineBytes <= 0 {
		opts.MaxLineBytes = DefaultOptions().MaxLineBytes
	}
	if opts.MaxContainers <= 0 {
		opts.MaxContainers = DefaultOptions().MaxContainers
	}
	if opts.MaxOpenStates <= 0 {
		opts.MaxOpenStates = DefaultOptions().MaxOpenStates
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = DefaultOptions().MaxBuffered
	}
	p := &Parser{opts: opts, hdr: newHeader(opts.NoStrict), stats: Stats{Skipped: map[string]int64{}}}
	p.sim = newSim(&p.opts)
	p.horizon = opts.ReorderHorizon
	if opts.TimeUnit != "auto" && opts.TimeUnit != "" {
		p.setUnit(opts.TimeUnit)
	}
	return p
}

// setUnit fixes the time unit, and with it the defaults expressed in time:
// the reorder horizon (3 s) and how long the pj_dump window holds entities
// back (0.1 s: pj_dump's end of trace is the last line's time, which in the
// unsorted traces it accepts is within milliseconds of the latest time).
func (p *Parser) setUnit(u string) {
	p.unit = u
	if p.horizon < 0 {
		p.horizon = 3 * unitsPerSecond(u)
	}
	p.sim.quirkWindow = 0.1 * unitsPerSecond(u)
}

// TimeUnit is the unit of the trace's times: the one given in the options,
// or the detected one ("ms" for StarPU, "s" otherwise) once the header has
// been read.
func (p *Parser) TimeUnit() string {
	if p.unit == "" {
		return "s"
	}
	return p.unit
}

// Stats returns what the parser has counted so far.
func (p *Parser) Stats() Stats { return p.stats }

// Line feeds one line (without its terminator) with its 1-based number.
// Completed entities accumulate until Take. In strict mode the first bad
// line's error is returned, and every later call returns it again.
func (p *Parser) Line(data []byte, num int64) error {
	if p.err != nil {
		return p.err
	}
	p.stats.Lines++
	if len(data) > p.opts.MaxLineBytes {
		return p.bad(num, "line too long", "line longer than "+strconv.Itoa(p.opts.MaxLineBytes)+" bytes (raise --max-line-bytes)")
	}
	if r := checkBinary(data); r != "" {
		return p.bad(num, "binary data", r)
	}
	toks, r := tokenize(data, p.toks)
	p.toks = toks
	if r != "" {
		return p.bad(num, "syntax", r)
	}
	if len(toks) == 0 {
		return nil
	}
	if len(toks[0].b) > 0 && toks[0].b[0] == '%' && !toks[0].quoted {
		if r := p.hdr.line(toks, num); r != "" {
			return p.bad(num, "header", r)
		}
		return nil
	}
	if p.hdr.cur != nil {
		return p.bad(num, "header", "event line inside the definition of event "+p.hdr.cur.id+" (missing %EndEventDef)")
	}
	d := p.hdr.defs[string(toks[0].b)]
	if d == nil {
		return p.bad(num, "unknown event id", "unknown event id "+quote(string(toks[0].b)))
	}
	if len(toks)-1 != d.nfields {
		return p.bad(num, "field count", "event "+d.id+" ("+eventNames[d.kind]+") has "+strconv.Itoa(len(toks)-1)+
			" fields, its definition at line "+strconv.FormatInt(d.line, 10)+" has "+strconv.Itoa(d.nfields))
	}
	p.stats.Events++
	if p.unit == "" {
		p.detectUnit()
	}
	if !d.timed() || d.kind == evCreateContainer || d.kind == evDefineEntityValue || p.horizon == 0 {
		return p.process(d, toks[1:], num)
	}
	t, ok := parseFloat(toks[1+d.idx[fTime]].b)
	if !ok {
		return p.bad(num, "bad number", "bad time "+quote(string(toks[1+d.idx[fTime]].b)))
	}
	if p.released && t < p.watermark {
		// Later than the horizon: process it now; the simulator's
		// per-(container, type) order check decides whether that is
		// still consistent.
		p.stats.Late++
		return p.process(d, toks[1:], num)
	}
	p.buffer(t, data, num)
	return p.release(false)
}

// detectUnit picks milliseconds for StarPU traces — recognised by the
// definitions only StarPU writes — and seconds otherwise. It runs at the
// first event, when the header is complete.
func (p *Parser) detectUnit() {
	u := "s"
	for _, d := range p.hdr.defs {
		for _, x := range d.extras {
			if x.name == "JobId" || x.name == "Footprint" || x.name == "SubmitOrder" {
				u = "ms"
			}
		}
	}
	p.setUnit(u)
}

func unitsPerSecond(u string) float64 {
	switch u {
	case "ms":
		return 1e3
	case "us":
		return 1e6
	case "ns":
		return 1e9
	}
	return 1
}

func (p *Parser) buffer(t float64, data []byte, num int64) {
	var it *pending
	if n := len(p.free); n > 0 {
		it = p.free[n-1]
		p.free = p.free[:n-1]
	} else {
		it = &pending{}
	}
	p.seq++
	it.t, it.seq, it.line = t, p.seq, num
	it.data = append(it.data[:0], data...)
	if p.buffered == 0 || t >= p.maxArrived {
		p.maxArrived = t
		if p.fifoHead > 0 && p.fifoHead == len(p.fifo) {
			p.fifo, p.fifoHead = p.fifo[:0], 0
		}
		p.fifo = append(p.fifo, it)
	} else {
		heap.Push(&p.late, it)
	}
	p.buffered++
	if p.buffered > p.stats.MaxBuffered {
		p.stats.MaxBuffered = p.buffered
	}
}

// release processes buffered events that are older than the horizon (all of
// them when all is true, at the end of the trace), oldest first.
func (p *Parser) release(all bool) error {
	for p.buffered > 0 {
		var it *pending
		fromFifo := p.fifoHead < len(p.fifo)
		if fromFifo && len(p.late) > 0 {
			f, l := p.fifo[p.fifoHead], p.late[0]
			fromFifo = f.t < l.t || f.t == l.t && f.seq < l.seq
		}
		if fromFifo {
			it = p.fifo[p.fifoHead]
		} else {
			it = p.late[0]
		}
		if !all && it.t > p.maxArrived-p.horizon && p.buffered <= p.opts.MaxBuffered {
			return nil
		}
		if fromFifo {
			p.fifo[p.fifoHead] = nil
			p.fifoHead++
			if p.fifoHead > 4096 && p.fifoHead*2 > len(p.fifo) {
				n := copy(p.fifo, p.fifo[p.fifoHead:])
				clear(p.fifo[n:])
				p.fifo, p.fifoHead = p.fifo[:n], 0
			}
		} else {
			heap.Pop(&p.late)
		}
		p.buffered--
		p.watermark, p.released = it.t, true
		// Re-tokenize: cheaper than keeping tokens for every buffered line.
		toks, _ := tokenize(it.data, p.toks)
		p.toks = toks
		err := p.process(p.hdr.defs[string(toks[0].b)], toks[1:], it.line)
		p.free = append(p.free, it)
		if err != nil {
			return err
		}
	}
	return nil
}

// process runs one event through the simulator.
func (p *Parser) process(d *eventDef, toks []token, num int64) error {
	now := 0.0
	if i := d.idx[fTime]; i >= 0 {
		t, ok := parseFloat(toks[i].b)
		if !ok {
			return p.bad(num, "bad number", "bad time "+quote(string(toks[i].b)))
		}
		now = t
	}
	if err := p.sim.event(d, toks, now, num); err != nil {
		return p.bad(num, err.kind, err.reason)
	}
	return nil
}

// bad records a bad line: fatal in strict mode, counted in lenient mode.
func (p *Parser) bad(num int64, kind, reason string) error {
	if p.truncated {
		kind, reason = "truncated last line", "truncated last line (no newline at end of input): "+reason
	}
	if p.opts.Lenient {
		p.stats.Skipped[kind]++
		return nil
	}
	p.err = &Error{File: p.opts.Name, Line: num, Kind: kind, Reason: reason}
	return p.err
}

// Finish ends the trace: it processes what the reorder buffer still holds,
// then closes every open state, variable and container at the end time of the
// trace (the latest time seen), emitting them.
func (p *Parser) Finish() error {
	if p.err != nil {
		return p.err
	}
	if p.hdr.cur != nil {
		return p.bad(p.hdr.cur.line, "header", "definition of event "+p.hdr.cur.id+" has no %EndEventDef")
	}
	if err := p.release(true); err != nil {
		return err
	}
	err := p.sim.finish()
	p.finished = true
	if err != nil {
		return p.bad(0, err.kind, err.reason)
	}
	return nil
}

// Take appends the completed entities to dst and forgets them.
func (p *Parser) Take(dst []tracecast.Entity) []tracecast.Entity {
	if p.opts.PjdumpQuirks {
		n := len(dst)
		dst = p.takeQuirks(dst)
		if p.finished {
			dst = p.finishQuirks(p.sim.endAt, dst)
		}
		p.stats.Entities += int64(len(dst) - n)
		return dst
	}
	dst = append(dst, p.sim.out...)
	p.stats.Entities += int64(len(p.sim.out))
	clear(p.sim.out)
	p.sim.out = p.sim.out[:0]
	return dst
}

// Pending is the number of completed entities not yet taken.
func (p *Parser) Pending() int {
	if p.finished && len(p.held) > 0 {
		return len(p.sim.out) + 1
	}
	return len(p.sim.out)
}
