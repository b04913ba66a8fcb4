package paje

import (
	"math"

	"github.com/tracecast/tracecast"
)

// pj_dump does not print every entity it builds: for each (container, type)
// it prints those whose start lies in [0, END) — END being the time of the
// last event line, in file order — plus the last one before 0 and the first
// one at or after END (a binary search widened by one on each side). With
// Options.PjdumpQuirks the parser applies the same window, so that its output
// is pj_dump's line for line.
//
// Only entities near the end can fall past END, so the parser holds its
// output back batch by batch: a batch goes out once all its entities start
// more than quirkWindow before the latest time seen. Entities starting before
// 0 (rare) are held per (container, type) until the end.

type compatSlot struct {
	neg    tracecast.Entity
	negSeq uint64
	hasNeg bool
}

// entMeta says which (container, type) an entity belongs to and where it
// stands in pj_dump's insertion order.
type entMeta struct {
	sl  *slot
	seq uint64
}

type quirkBatch struct {
	es       []tracecast.Entity
	meta     []entMeta
	maxStart float64
}

// emit returns the place of a completed entity that starts at start, for
// the caller to fill in with put. (An entity literal handed over by value
// was built on the stack with 8-byte stores and copied with 16-byte loads,
// which the CPU cannot forward from such stores: each waited for them to
// reach the cache. perf put 6% of a 41 MB run's samples on those copies;
// without them a one-thread run is 1–2% faster.)
func (s *sim) emit(sl *slot, start float64) *tracecast.Entity {
	if !s.opts.PjdumpQuirks {
		return s.next()
	}
	if start < 0 {
		if !sl.compat.hasNeg {
			s.negSlots = append(s.negSlots, sl)
		}
		if !sl.compat.hasNeg || s.seq > sl.compat.negSeq {
			sl.compat.negSeq, sl.compat.hasNeg = s.seq, true
			return &sl.compat.neg
		}
		return &s.dropped
	}
	s.outMeta = append(s.outMeta, entMeta{sl: sl, seq: s.seq})
	if start > s.outMax {
		// Not max(): its NaN and signed-zero handling made a chain of
		// six dependent instructions, from one entity to the next, and
		// times are never NaN (parseFloat rejects them).
		s.outMax = start
	}
	return s.next()
}

// next appends an entity to out and returns it, as it was (a pooled batch's
// old entity): put sets every field.
func (s *sim) next() *tracecast.Entity {
	n := len(s.out)
	if n == cap(s.out) {
		s.out = append(s.out, tracecast.Entity{})
	} else {
		s.out = s.out[:n+1]
	}
	return &s.out[n]
}

// put sets every field of e, one store each (see emit).
func put(e *tracecast.Entity, nature tracecast.Nature, container, typ string, start, end float64, imbrication int, value string, number float64, ext *tracecast.EntityExt) {
	e.Nature, e.Container, e.Type = nature, container, typ
	e.Start, e.End, e.Imbrication = start, end, imbrication
	e.Value, e.Number, e.Ext = value, number, ext
}

// takeQuirks moves the completed entities into the hold queue and appends to
// dst the batches that are now safely inside pj_dump's window.
func (p *Parser) takeQuirks(dst []tracecast.Entity) []tracecast.Entity {
	p.hold()
	for p.releasable() {
		dst = append(dst, p.held[0].es...)
		p.release()
	}
	return dst
}

// hold moves the completed entities into the hold queue, without copying
// them: the output slices become the held batch's, and pooled ones take
// their place.
func (p *Parser) hold() {
	s := p.sim
	if len(s.out) == 0 {
		return
	}
	// emit kept the latest start, containers aside (those go straight
	// to out).
	b := quirkBatch{es: s.out, meta: s.outMeta, maxStart: s.outMax}
	s.outMax = math.Inf(-1)
	p.held = append(p.held, b)
	s.out, s.outMeta = nil, nil
	if n := len(p.spare); n > 0 {
		s.out, s.outMeta = p.spare[n-1].es, p.spare[n-1].meta
		p.spare = p.spare[:n-1]
	}
	if s.out == nil && p.own {
		s.out = p.newBatch()
	}
	if s.outMeta == nil {
		// Sized as a batch at once: grown by append, 1.25 times at a
		// step, it would cost five times that in fresh memory.
		s.outMeta = make([]entMeta, 0, max(cap(s.out), BatchSize+BatchSize/4))
	}
}

// releasable reports whether the oldest held batch is safely inside
// pj_dump's window: all its entities start more than quirkWindow before the
// latest time seen.
func (p *Parser) releasable() bool {
	return len(p.held) > 0 && p.held[0].maxStart < p.sim.maxLine-p.sim.quirkWindow
}

// release forgets the oldest held batch and pools its slices.
func (p *Parser) release() {
	b := p.held[0]
	p.sim.releasedMax = max(p.sim.releasedMax, b.maxStart)
	es := b.es[:0]
	if p.own {
		es = nil // handed over: downstream may keep it
	} else {
		clear(b.es)
	}
	clear(b.meta)
	p.spare = append(p.spare, quirkBatch{es: es, meta: b.meta[:0]})
	n := copy(p.held, p.held[1:])
	p.held[n] = quirkBatch{}
	p.held = p.held[:n]
}

// finishQuirks applies the window with the final END to what is held and
// hands the survivors to fn, batch by batch: each held batch keeps its
// survivors in place. (Gathered in one slice, the window at the end of a
// trace cut short — 48 760 entities on the 41 MB trace cut in half — was
// copied once more, 10 MB made at the very end.)
func (p *Parser) finishQuirks(end float64, fn func([]tracecast.Entity) error) error {
	s := p.sim
	// An entity let go early may lie past the final end: then pj_dump
	// would have dropped it. Say so rather than differ silently.
	p.stats.QuirksInexact = len(p.stats.Skipped) == 0 && end <= s.releasedMax && s.releasedMax > math.Inf(-1)
	first := make(map[*slot]uint64)
	// The first entity at or after END may start before 0 (END < 0): it
	// comes before every held one of its (container, type).
	for _, sl := range s.negSlots {
		if sl.compat.neg.Start >= end {
			first[sl] = sl.compat.negSeq
		}
	}
	for _, b := range p.held {
		for i := range b.es {
			m := b.meta[i]
			if m.sl != nil && (b.es[i].Start >= end || math.IsNaN(end)) {
				if f, ok := first[m.sl]; !ok || m.seq < f {
					first[m.sl] = m.seq
				}
			}
		}
	}
	held, neg := p.held, s.negSlots
	p.held, s.negSlots = nil, nil
	if len(neg) > 0 {
		es := make([]tracecast.Entity, len(neg))
		for i, sl := range neg {
			es[i] = sl.compat.neg
		}
		if err := fn(es); err != nil {
			return err
		}
	}
	for _, b := range held {
		k := 0
		for i := range b.es {
			m := b.meta[i]
			if m.sl == nil || b.es[i].Start < end || first[m.sl] == m.seq {
				b.es[k] = b.es[i]
				k++
			}
		}
		if k > 0 {
			if err := fn(b.es[:k]); err != nil {
				return err
			}
		}
	}
	return nil
}
