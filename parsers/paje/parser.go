package paje

import (
	"strconv"
	"strings"

	"github.com/tracecast/tracecast"
	"github.com/tracecast/tracecast/internal/input"
	"github.com/tracecast/tracecast/internal/lineerr"
)

// MaxTime bounds the magnitude of a trace's times, so that every duration
// (end − start) is a finite number.
const MaxTime = 1e300

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
	// wmVisits counts the containers Watermark visited (tests).
	wmVisits int64

	truncated bool
	// pre is what was decoded ahead of the parser for the current line:
	// its chunk's line record (reader.go), else noPre, where nothing is
	// decoded (pre.def is nil). setPre changes it.
	pre   *decoded
	noPre decoded

	// held is the output held back for pj_dump's window (compat.go).
	held     []quirkBatch
	spare    []quirkBatch
	finished bool
	// own: send hands its batches over for good (downstream may keep
	// them) instead of reusing them, which saves a copy per entity; pool,
	// when set, has batches given back (Batch.Recycle) to fill again.
	own  bool
	pool chan []tracecast.Entity
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
	if opts.MaxTypes <= 0 {
		opts.MaxTypes = DefaultOptions().MaxTypes
	}
	if opts.MaxBuffered <= 0 {
		opts.MaxBuffered = DefaultOptions().MaxBuffered
	}
	if opts.Threads <= 0 {
		opts.Threads = DefaultOptions().Threads
	}
	p := &Parser{opts: opts, hdr: newHeader(opts.NoStrict), stats: Stats{Skipped: map[string]int64{}}}
	p.hdr.maxDefs = opts.MaxTypes
	p.sim = newSim(&p.opts)
	p.setPre(&p.noPre)
	p.horizon = opts.ReorderHorizon
	if opts.ReorderHorizonSeconds > 0 {
		p.horizon = -1 // until the unit is known
	}
	if opts.TimeUnit != "auto" && opts.TimeUnit != "" {
		p.setUnit(opts.TimeUnit)
	}
	return p
}

// setPre points the parser and its simulator at what was decoded for the
// line about to be processed.
func (p *Parser) setPre(d *decoded) { p.pre, p.sim.pre = d, d }

// setUnit fixes the time unit, and with it the defaults expressed in time:
// the reorder horizon (3 s) and how long the pj_dump window holds entities
// back (0.1 s: pj_dump's end of trace is the last line's time, which in the
// unsorted traces it accepts is within milliseconds of the latest time).
func (p *Parser) setUnit(u string) {
	p.unit = u
	if p.opts.ReorderHorizonSeconds > 0 {
		p.horizon = p.opts.ReorderHorizonSeconds * tracecast.PerSecond(u)
	} else if p.horizon < 0 {
		p.horizon = 3 * tracecast.PerSecond(u)
	}
	p.sim.quirkWindow = 0.1 * tracecast.PerSecond(u)
	p.sim.horizon, p.sim.unit = p.horizon, u
	if p.opts.OnTimeUnit != nil {
		p.opts.OnTimeUnit(u)
	}
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
	if p.stats.Lines == 1 && num <= 1 { // a source may drop blank lines: only line 1 has a BOM
		data = input.TrimBOM(data)
	}
	if len(data) > p.opts.MaxLineBytes {
		return p.bad(num, "line too long", "line longer than "+strconv.Itoa(p.opts.MaxLineBytes)+" bytes (raise --max-line-bytes)")
	}
	toks, r := tokenize(data, p.toks)
	p.toks = toks
	return p.tokens(toks, r, num)
}

// tokens handles a tokenized line; r is the tokenizer's complaint, if any.
func (p *Parser) tokens(toks []token, r string, num int64) error {
	if p.err != nil {
		return p.err
	}
	if r != "" {
		kind := "syntax"
		if strings.HasPrefix(r, "binary") {
			kind = "binary data"
		}
		return p.bad(num, kind, r)
	}
	if len(toks) == 0 {
		return nil
	}
	if len(toks[0].b) > 0 && toks[0].b[0] == '%' && !toks[0].quoted() {
		if r := p.hdr.line(toks, num); r != "" {
			return p.bad(num, "header", r)
		}
		return nil
	}
	if p.hdr.cur != nil {
		return p.bad(num, "header", "event line inside the definition of event "+lineerr.Cut(p.hdr.cur.id)+" (missing %EndEventDef)")
	}
	d := p.pre.def
	if d == nil {
		d = p.hdr.lookup(toks[0].b)
	}
	if d == nil {
		return p.bad(num, "unknown event id", "unknown event id "+quote(string(toks[0].b)))
	}
	if len(toks)-1 != d.nfields {
		return p.bad(num, "field count", "event "+lineerr.Cut(d.id)+" ("+eventNames[d.kind]+") has "+strconv.Itoa(len(toks)-1)+
			" fields, its definition at line "+strconv.FormatInt(d.line, 10)+" has "+strconv.Itoa(d.nfields))
	}
	if p.pre.def == nil {
		p.pre.hashFields(d, toks[1:]) // the simulator finds them there
	}
	p.stats.Events++
	if p.unit == "" {
		p.detectUnit()
	}
	return p.process(d, toks[1:], num)
}

// detectUnit picks milliseconds for StarPU traces — recognised by the
// definitions only StarPU writes — and seconds otherwise. It runs at the
// first event, when the header is complete.
func (p *Parser) detectUnit() { p.setUnit(p.hdr.unit()) }

// unit is the time unit the definitions imply: milliseconds when they are
// StarPU's (only StarPU defines these task fields), seconds otherwise.
func (h *header) unit() string {
	for _, d := range h.defs {
		for _, x := range d.extras {
			if x.name == "JobId" || x.name == "Footprint" || x.name == "SubmitOrder" {
				return "ms"
			}
		}
	}
	return "s"
}

// process runs one event through the simulator.
func (p *Parser) process(d *eventDef, toks []token, num int64) error {
	now := 0.0
	if i := d.idx[fTime]; i >= 0 {
		t, ok := p.pre.time, p.pre.timeOK
		if p.pre.def == nil {
			t, ok = parseFloat(toks[i].b)
		}
		if !ok {
			return p.bad(num, "bad number", "bad time "+quote(string(toks[i].b)))
		}
		if t > MaxTime || t < -MaxTime {
			return p.bad(num, "bad number", "time "+quote(string(toks[i].b))+" out of range (at most 1e300 in magnitude)")
		}
		now = t
	}
	if err := p.sim.event(d, toks, now, num); err != nil {
		return p.eventErr(err, num)
	}
	return nil
}

// eventErr records the simulator's error on line num (or the line it
// names).
func (p *Parser) eventErr(err *simError, num int64) error {
	if err.line != 0 {
		num = err.line
	}
	return p.bad(num, err.kind, err.reason)
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
		return p.bad(p.hdr.cur.line, "header", "definition of event "+lineerr.Cut(p.hdr.cur.id)+" has no %EndEventDef")
	}
	err := p.sim.finish()
	p.finished = true
	p.stats.Late, p.stats.MaxBuffered = p.sim.late, p.sim.maxBuffered
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
			p.finishQuirks(p.sim.endAt, func(es []tracecast.Entity) error {
				dst = append(dst, es...)
				return nil
			})
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

// send hands the completed entities to fn, without copying them, once at
// least min of them are pending (fn must not keep the slice).
func (p *Parser) send(min int, fn func([]tracecast.Entity) error) error {
	if p.Pending() < min {
		return nil
	}
	s := p.sim
	if !p.opts.PjdumpQuirks {
		p.stats.Entities += int64(len(s.out))
		err := fn(s.out)
		if p.own {
			s.out = p.newBatch()
		} else {
			clear(s.out)
			s.out = s.out[:0]
		}
		return err
	}
	p.hold()
	for p.releasable() {
		b := p.held[0]
		p.stats.Entities += int64(len(b.es))
		err := fn(b.es)
		p.release()
		if err != nil {
			return err
		}
	}
	if p.finished {
		return p.finishQuirks(s.endAt, func(es []tracecast.Entity) error {
			p.stats.Entities += int64(len(es))
			return fn(es)
		})
	}
	return nil
}

// newBatch returns an empty output slice with room for a batch and then
// some (a line may complete many entities): one given back, or a new one.
func (p *Parser) newBatch() []tracecast.Entity {
	select {
	case es := <-p.pool: // a nil pool never has one
		return es[:0]
	default:
		return make([]tracecast.Entity, 0, BatchSize+BatchSize/4)
	}
}

// recycle gives a batch handed over back to the pool, if there is room.
func (p *Parser) recycle(es []tracecast.Entity) {
	if cap(es) < BatchSize || cap(es) > 4*BatchSize {
		return // grown for a large batch: not worth keeping
	}
	select {
	case p.pool <- es:
	default:
	}
}

// Pending is the number of completed entities not yet taken.
func (p *Parser) Pending() int {
	if p.finished && len(p.held) > 0 {
		return len(p.sim.out) + 1
	}
	return len(p.sim.out)
}

// TypeWatermarks is Watermark per state or variable type name: for a state
// type, the earliest start of an open state of that type; for a variable
// type, the earliest change not applied yet (no piece ending before it
// comes later); bounded like Watermark.
func (p *Parser) TypeWatermarks() map[string]float64 {
	_, m, _ := p.Watermarks()
	return m
}

// Watermark is a low watermark on the start of the entities still to come:
// every state, variable piece or link emitted from now on starts at or after
// it, except events arriving later than the reorder horizon. It is the
// earliest start among the open states, bounded by the latest time seen
// minus the reorder horizon (events of different containers may come that
// late).
func (p *Parser) Watermark() float64 {
	w, _, _ := p.Watermarks()
	return w
}

// Watermarks is Watermark, TypeWatermarks and the variable types' starts
// (tracecast.Batch.VariableStarts), in one pass over the live containers:
// O(live containers × types).
func (p *Parser) Watermarks() (float64, map[string]float64, map[string]float64) {
	s := p.sim
	p.wmVisits += int64(len(s.live))
	bound := s.maxLine - max(p.horizon, 0)
	w := bound
	m := make(map[string]float64)
	var vs map[string]float64
	for _, c := range s.live {
		for _, sl := range c.slotOrder {
			if sl == nil {
				continue
			}
			if len(sl.stack) > 0 {
				w = min(w, sl.stack[0].start)
			}
			if sl.hasVar {
				w = min(w, sl.varStart)
			}
			if sl.vhead < len(sl.vbuf) {
				w = min(w, sl.vbuf[sl.vhead].t)
			}
			if sl.t.kind != tkState && sl.t.kind != tkVariable {
				continue
			}
			if sl.t.kind == tkVariable {
				if vs == nil {
					vs = make(map[string]float64)
				}
				v, ok := vs[sl.t.name]
				if !ok {
					v = bound
				}
				if sl.hasVar {
					v = min(v, sl.varStart)
				}
				if sl.vhead < len(sl.vbuf) {
					v = min(v, sl.vbuf[sl.vhead].t)
				}
				vs[sl.t.name] = v
			}
			tw, ok := m[sl.t.name]
			if !ok {
				tw = bound
			}
			if len(sl.stack) > 0 {
				tw = min(tw, sl.stack[0].start)
			}
			// A variable type's watermark is on the pieces' ends: a
			// piece is emitted when the change that ends it is applied,
			// and the changes wait in vbuf for the reorder horizon. (The
			// current piece, whose end is not known, is not waited for:
			// a count that stays put would hold its type back.)
			if sl.vhead < len(sl.vbuf) {
				tw = min(tw, sl.vbuf[sl.vhead].t)
			}
			m[sl.t.name] = tw
		}
	}
	return w, m, vs
}
